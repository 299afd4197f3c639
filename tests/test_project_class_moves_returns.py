"""project/class_moves.py: a move of a tensor a method of the class returns
fresh (``batch = self.get_batch(s); batch = batch.cuda()``) moves no part of
the module; the class stays a CPU class."""

import textwrap

from memlint.project.summary import summarise_text

_ENCODER = """
    import numpy as np
    import torch
    import torch.nn as nn
    class Encoder(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.lstm = nn.LSTM(dim, dim)
        def get_batch(self, rows):
            return torch.FloatTensor(np.stack(rows))
        def encode(self, rows):
            batch = self.get_batch(rows)
            if next(self.parameters()).is_cuda:
                batch = batch.cuda()
            batch = self.lstm(batch)[0].data.cpu().numpy()
            return batch
    class PartOut(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.lstm = nn.LSTM(dim, dim)
        def part(self):
            return self.lstm
        def encode(self, rows):
            lstm = self.part()
            lstm = lstm.cuda()
            return lstm(rows)
    class Mixed(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.lstm = nn.LSTM(dim, dim)
        def get(self, fresh):
            if fresh:
                return torch.zeros(3)
            return self.lstm
        def encode(self, rows):
            got = self.get(rows)
            got = got.cuda()
            return got
    class Static(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.lstm = nn.LSTM(dim, dim)
        def get_batch(self, rows):
            return torch.zeros(3)
        @staticmethod
        def encode(other):
            batch = other.get_batch(None)
            return batch.cuda()
"""


def test_a_method_returning_a_fresh_tensor_moves_no_part():
    summary = summarise_text(textwrap.dedent(_ENCODER), always=True)
    assert summary is not None
    # PartOut returns a part of the module, Mixed returns one on a path, and
    # a staticmethod's first parameter is no instance: each may move a part.
    assert summary.cpu_classes == ["Encoder"]
