"""GPT-3's news-article human study (Brown et al. 2020, §3.9.4): generate, serve to raters, analyse.

- :mod:`~synthprobe.study.articles` -- human articles and the ``Title/Subtitle/Article`` prompt layout
- :mod:`~synthprobe.study.generate` -- model and control versions, closest-word-count selection
- :mod:`~synthprobe.study.items`, :mod:`~synthprobe.study.store` -- study items and the SQLite database
- :mod:`~synthprobe.study.app` -- the rater web app; :mod:`~synthprobe.study.stats` -- Table 3.11 statistics
"""
