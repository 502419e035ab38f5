"""The engine room: how states are searched, knowing nothing of the application.

This package imports nothing from the command line, rendering, `models/` or `specs/`
(an import-linter contract says so). It grows module by module as the search is gathered
here from the flat `checker/` folder (issue 25).
"""
