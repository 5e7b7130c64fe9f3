"""Where the training and benchmark code comes from: the corpus of pinned sdists and the standard
library, real edits between releases, a user's repository, and sets of packages no corpus holds
(PyPI sdists, or npm releases of JavaScript and TypeScript).
"""
