"""Next edit: the newest change repeated where it applies again (``edit_patterns/``), the network's
rewrites of candidate lines (``editor.py``), and each source's precision on real edits
(``calibrate.py``).
"""
