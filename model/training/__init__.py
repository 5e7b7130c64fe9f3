"""Training the denoiser: batches cut from the corpus, the objective, the loop and its settings,
and what grows, distils, averages or compares models (``redraft train``, ``distill``, ``ablate``).
"""
