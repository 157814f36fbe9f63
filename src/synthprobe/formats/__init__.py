"""Readers for the file formats synthprobe consumes, each with strict, located errors."""
