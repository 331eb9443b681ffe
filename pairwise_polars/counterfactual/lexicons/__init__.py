"""The shipped lexicon files (package data); see SOURCES.md, and build.py to rebuild them."""
