"""training/class_loops.py: a loop over the task's classes is no evaluation over data."""

from analysis_helpers import facts_of

from memlint.analysis.training.class_loops import iterates_classes


def _roles(src: str) -> list[tuple[str | None, bool]]:
    facts = facts_of(src)
    return [(info.role, iterates_classes(info.node, info.data_tokens)) for info in facts.loops.all]


def test_loops_over_classes_after_eval_are_not_evaluations():
    src = """
    import torch
    def fake_weights(self, embeddings):
        classes_to_create = list(range(self.n_classes, self.total))
        embeddings.eval()
        out = []
        for class_id in classes_to_create:
            out.append(embeddings(class_id))
        for c in range(self.n_classes):
            out.append(embeddings(c))
        for i, name in enumerate(classnames):
            out.append(embeddings(name))
        return torch.cat(out)
    """
    assert _roles(src) == [(None, True), (None, True), (None, True)]


def test_loops_naming_data_or_no_classes_stay_evaluations():
    src = """
    def run(model, val_loader, class_loaders, samples):
        model.eval()
        for x, y in val_loader:
            model(x)
        for cls, loader in class_loaders.items():
            model(cls)
        for i in range(len(samples)):
            model(samples[i])
        for c in [classes_a, classes_b]:
            model(c)
    """
    assert _roles(src) == [("eval", False), ("eval", False), ("eval", False), ("eval", False)]
