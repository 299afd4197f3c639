"""``hands_back_no_own_graph``: what a function returns carries no history
of its own making, only what inert parameters bring (analysis/autograd/own_graph_returns.py)."""

from __future__ import annotations

from analysis_helpers import facts_of

from memlint.analysis.autograd.own_graph_returns import hands_back_no_own_graph


def _verdicts(src: str) -> dict[str, bool]:
    facts = facts_of(src)
    return {fn.name.value: hands_back_no_own_graph(facts.history, fn) for fn in facts.calls.functions}


def test_a_name_and_a_label_list_handed_back_are_the_callers():
    src = """
        import torch
        def classify(model, loader, video_name, class_names):
            outputs = []
            for clips in loader:
                outputs.append(model(clips).cpu().data)
            scores = torch.cat(outputs)
            return {"video": video_name, "label": class_names[scores.argmax().item()]}
    """
    facts = facts_of(src)
    fn = facts.calls.functions[0]
    assert facts.history.returns(fn).h.value == "maybe"  # the parameters are unknown
    assert hands_back_no_own_graph(facts.history, fn)


def test_the_forwards_result_handed_back_is_its_own():
    assert _verdicts(
        """
        def run(model, loader, name):
            outs = []
            for x in loader:
                outs.append(model(x))
            return name, outs
        """
    ) == {"run": False}


def test_a_parameter_it_fills_calls_or_writes_into_stays_unknown():
    verdicts = _verdicts(
        """
        def fills(model, loader, bank):
            for x in loader:
                bank.append(model(x).data)
            return bank
        def stores(model, loader, bank):
            for i, x in enumerate(loader):
                bank[i] = model(x).data
            return bank
        def calls(model, loader, head):
            feats = [model(x).data for x in loader]
            return head(feats)
        def method(model, loader, head):
            feats = [model(x).data for x in loader]
            return head.classify(feats)
        def closes(model, loader, scale):
            feats = [model(x).data for x in loader]
            return lambda: scale
        """
    )
    assert verdicts == {"fills": False, "stores": False, "calls": False, "method": False, "closes": False}


def test_nothing_to_assume_when_every_parameter_is_busy():
    assert _verdicts("def run(model):\n    return model(1)\n") == {"run": False}
