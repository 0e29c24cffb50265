"""The origin load model of devstack/measure/edge_load.py (issue 35, goal 5): its one formula and its figure."""
from devstack.measure import edge_load


def test_a_cache_node_asks_upstream_at_most_once_per_ttl_and_never_more_than_it_is_asked():
    assert edge_load.fetches_per_second(10_000, 1) < 1 < edge_load.fetches_per_second(10_000, 0.5)
    assert edge_load.fetches_per_second(0.1, 60) < 0.1 / 6          # a rare key: once per 70 s
    assert edge_load.fetches_per_second(5, 0) == 5                   # nothing kept: every request
    assert edge_load.origin_rate(1000, [1.0], 2, 3) < 1.5            # three regional caches, 2 s each


def test_the_figure_at_ten_thousand_reads(capsys):
    edge_load.main([])
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("origin load: ") and "before (/events* CachingDisabled): 10,000/s" in last
    assert float(last.split()[2]) < 100
