"""Protocol models over the shared cluster vocabulary, and the catalogue that names them."""
