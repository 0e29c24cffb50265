"""`make bench-coldstart INSTRUCTIONS=1`'s arithmetic: the interpreter's start is subtracted from
every count, each function is judged by import + first call where its route defers work, and a
function over the target is named (the counts here are made up; valgrind is not run)."""
from __future__ import annotations

import types

from devstack.measure import coldstart_count


def test_ratios_subtract_the_interpreter_start_and_judge_by_the_first_call(monkeypatch, capsys):
    counts = {"json": 1_000, "boto3": 11_000, "app": {("FnA", False): 13_000, ("FnA", True): 17_000,
                                                     ("FnB", False): 15_000}}

    def fake_probe(layout, module, root, env, first_call=None, instructions=False):
        assert instructions
        if module in ("json", "boto3"):
            return {"instructions": counts[module]}, [], ""
        return {"instructions": counts["app"][(root.name, bool(first_call))]}, [], ""

    monkeypatch.setattr(coldstart_count, "probe", fake_probe)
    monkeypatch.setattr(coldstart_count.shutil, "which", lambda name: "/usr/bin/valgrind")
    specs = {"FnA": {"dir": "a", "handler_module": "app"}, "FnB": {"dir": "b", "handler_module": "app"}}
    monkeypatch.setattr(coldstart_count, "functions", lambda: specs)
    monkeypatch.setattr(coldstart_count, "FIRST_CALL", {"FnA": {"route": "POST /a"}})
    monkeypatch.setattr(coldstart_count, "first_call_specs", lambda lid: [{"at": ["m:Model"], "input": {}}])
    monkeypatch.setattr(coldstart_count, "lambda_variables", lambda *a: {})
    layout = types.SimpleNamespace(described="test", bytecode="none",
                                   task_root=lambda lid, spec: types.SimpleNamespace(name=lid))
    result = coldstart_count.measure(layout, None, first_call=True, parallel=1)
    assert result["boto3_instructions"] == 10_000
    assert result["functions"]["FnA"] == {"instructions": 12_000, "ratio": 1.2, "first_call": "POST /a",
                                          "with_first_call_instructions": 16_000, "with_first_call_ratio": 1.6}
    assert result["functions"]["FnB"] == {"instructions": 14_000, "ratio": 1.4}
    assert list(result["functions"]) == ["FnA", "FnB"]  # worst first, by what each is judged by
    assert coldstart_count.print_report(result, 1.5) == ["FnA"]
    assert "over: FnA" in capsys.readouterr().out
