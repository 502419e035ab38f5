"""Conformance: a trace's steps driven through real clients against real servers."""
