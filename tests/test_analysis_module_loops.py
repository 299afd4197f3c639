"""training/module_loops.py: a loop over a model's layers is no loop over data."""

from analysis_helpers import facts_of

from memlint.analysis.training.module_loops import iterates_layers


def _layers(src: str) -> list[bool]:
    facts = facts_of(src)
    return [iterates_layers(info.node, info.data_tokens) for info in facts.loops.all]


def test_loops_over_layers_and_module_walks():
    src = """
    def search(model, layers, blocks):
        for i in range(len(layers)):
            layers[i].out_channels -= 8
        for m in model.modules():
            m.width_mult = 1.0
        for name, child in model.named_children():
            print(name)
        for i, block in enumerate(self.blocks):
            block.reset()
    """
    assert _layers(src) == [True, True, True, True]


def test_loops_naming_data_or_computed_iterables_are_no_layer_loops():
    src = """
    def run(model, layer_loader, batches, layers):
        for x in layer_loader:
            model(x)
        for layer_batch in batches:
            model(layer_batch)
        for i in range(n_layers * 2):
            model(i)
        for layer in get_layers(model):
            layer.reset()
        while layers:
            layers.pop()
    """
    assert _layers(src) == [False, False, False, False, False]
