"""InstanceCalls: call sites of a method, ``inst.method(...)`` on a local instance included."""

import libcst as cst
import pytest
from analysis_helpers import facts_of, find

CLASS = """
class CAM:
    def __init__(self, model):
        self.model = model
    def generate(self, image):
        return self.model(image)
    def twice(self, image):
        return self.generate(image)
"""


def _sites(src: str, method: str = "generate") -> list[str] | None:
    facts = facts_of(src)
    fn = find(facts.module, method, cst.Name)
    fn = facts.calls.parents.get(fn)
    assert isinstance(fn, cst.FunctionDef)
    found = facts.instance_calls.sites(fn)
    return None if found is None else [facts.module.code_for_node(c) for c in found]


def test_a_local_instance_and_self_calls_are_sites():
    src = CLASS + "cam = CAM(net)\nheat = cam.generate(img)\n"
    assert _sites(src) == ["self.generate(image)", "cam.generate(img)"]


def test_an_instance_in_a_function_and_a_chain_of_module_bases():
    src = (
        CLASS
        + """
class Sub(CAM):
    pass
def main(img):
    cam = Sub(net)
    return cam.generate(img)
"""
    )
    assert _sites(src) == ["self.generate(image)", "cam.generate(img)"]


def test_a_subclass_override_calls_its_own_method():
    src = (
        CLASS
        + """
class Sub(CAM):
    def generate(self, image):
        return image
cam = Sub(net)
cam.generate(img)
"""
    )
    assert _sites(src) == ["self.generate(image)"]


@pytest.mark.parametrize(
    "use",
    [
        "cam = CAM(net)\nrun(cam)\ncam.generate(img)",  # the instance escapes
        "cam = CAM(net)\ncam = Other(net)\ncam.generate(img)",  # rebound to another class
        "cam, other = CAM(net), None\ncam.generate(img)",  # tuple unpacking
        "for cam in cams:\n    cam.generate(img)",  # a loop target
        "def run(cam):\n    cam.generate(img)",  # a parameter
        "cam = CAM(net)\ndef run():\n    cam.generate(img)",  # a global read in a function
        "cam = CAM(net)\ndef reset():\n    global cam\n    cam = None\ncam.generate(img)",
        "cam = CAM(net)\nrun = lambda cam: cam.generate(img)",  # a lambda's parameter
        "cam = CAM(net)\nf = cam.generate\nf(img)",  # the method read without a call
        "cam = CAM(net)\nsuper().generate(img)",  # a receiver we cannot resolve
        "CAM = wrap(CAM)\ncam = CAM(net)\ncam.generate(img)",  # the class name rebound
        "from lib import *\ncam = CAM(net)\ncam.generate(img)",  # a star import may rebind it
    ],
)
def test_unknown_when_any_call_may_be_one_we_cannot_see(use):
    assert _sites(CLASS + use + "\n") is None


def test_a_decorated_class_or_method_is_not_resolved():
    assert _sites("@dataclass\n" + CLASS.lstrip() + "cam = CAM(net)\ncam.generate(img)\n") is None
    src = "class C:\n    @staticmethod\n    def generate(image):\n        return image\nC.generate(img)\n"
    assert _sites(src) is None


def test_a_class_with_new_or_a_foreign_base_chain_is_not_resolved():
    new = CLASS + "    def __new__(cls, *a):\n        return Other()\ncam = CAM(net)\ncam.generate(img)\n"
    assert _sites(new) is None
    foreign = CLASS + "class Sub(Base):\n    pass\ncam = Sub(net)\ncam.generate(img)\n"
    assert _sites(foreign) is None


def test_instance_class():
    facts = facts_of(CLASS + "cam = CAM(net)\ncam.generate(img)\n")
    call = find(facts.module, "cam.generate(img)", cst.Call)
    cls = facts.instance_calls.instance_class(call)
    assert isinstance(cls, cst.ClassDef) and cls.name.value == "CAM"


def test_a_class_defined_in_an_enclosing_function():
    nested = "def main(net, img):\n" + "".join("    " + line + "\n" for line in CLASS.strip().splitlines())
    inner = nested + "    def run():\n        cam = CAM(net)\n        return cam.generate(img)\n"
    assert _sites(inner) == ["self.generate(image)", "cam.generate(img)"]
    elsewhere = nested + "def other(net, img):\n    cam = CAM(net)\n    return cam.generate(img)\n"
    assert _sites(elsewhere) is None  # not the class that name reads there
