"""``mmtasks view``: a static site of every answer of a run (or two runs side by side).

The site opens from disk (``file://``) or from any static server, like the leaderboard: the
page's sources (``viewer/`` in the tree, package data ``mmtasks/viewer_site/`` in a wheel), the
data as small script files loaded per task and per chunk of documents (``d-<token>/``), and
thumbnails written once per image (``img/``). See docs/viewer.md.
"""
