"""GPT-3's qualitative probes: novel words (Figure 3.16) and grammar correction (Figure 3.17).

:mod:`~synthprobe.probes.lm` also holds the seeded sampling helper the news study uses.
"""
