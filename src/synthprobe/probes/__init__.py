"""GPT-3's qualitative probes: novel words (Figure 3.16) and grammar correction (Figure 3.17).

:mod:`~synthprobe.backends.decoding` loads models and generates through synthprobe's shared backend
(greedy or seeded sampling); the news study uses it too.
"""
