"""MEM701 load-without-map-location."""

from __future__ import annotations

import re

import libcst as cst

from memlint.analysis.scope.attribute_names import spells_attribute
from memlint.analysis.scope.callgraph import bound_params
from memlint.analysis.scope.names import dotted_name
from memlint.analysis.scope.objects import ObjectTable
from memlint.analysis.scope.relative_imports import relative_bindings
from memlint.analysis.training.bound_loads import bound_load_receiver
from memlint.analysis.training.cpu_devices import cpu_device_names, moves_to_cpu
from memlint.analysis.training.cpu_saves import read_key
from memlint.analysis.training.device_params import DeviceParams
from memlint.analysis.training.gpu_none_locations import none_on_gpu
from memlint.analysis.training.later_moves import enclosing_blocks, is_move, moved_after_load
from memlint.analysis.training.load_kwargs import splat_misses
from memlint.analysis.training.passed_dicts import passed_param
from memlint.analysis.training.state_flow import drawn_from, is_get, key_source, loop_copies, through_module
from memlint.fix.call_args import append_keyword, has_star_args, has_star_kwargs, keyword_arg, positional_args
from memlint.parse.traversal import visit_fast
from memlint.rule import Fix, Invalid, Rule, Safety, Valid
from memlint.vocabulary.checkpoint_files import file_name
from memlint.vocabulary.kinds import Kind, guess_kind_from_name

# State dicts without weights: an LR scheduler's numbers, a GradScaler's
# scale, a sampler's or data loader's position.
_NO_WEIGHTS = (Kind.SCHEDULER, Kind.SCALER, Kind.LOADER)
# Objects whose state holds no weights: schedulers, scalers, data order, and
# training bookkeeping (early stopping, meters, trackers, callbacks).
_NO_WEIGHTS_NAME = re.compile(r"sched|scaler|sampler|loader|stop|meter|tracker|monitor|callback", re.IGNORECASE)


def _a_model(receiver: cst.BaseExpression, kind: Kind | None) -> bool:
    """A module by its kind, or, of no known kind (a loop variable, ``for
    prefix, model in models``), by its name (``model``, ``netG``)."""
    if kind is not None:
        return kind is Kind.MODULE
    name = dotted_name(receiver)
    return name is not None and guess_kind_from_name(name.rsplit(".", 1)[-1]) is Kind.MODULE


def _state_dict_arg(call: cst.Call, objects: ObjectTable) -> cst.Arg | None:
    """The ``state_dict`` argument of ``x.load_state_dict(...)``, else None
    (also when ``x`` holds no weights: a scheduler or a scaler)."""
    if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "load_state_dict"):
        return None
    receiver = call.func.value
    last = (dotted_name(receiver) or "").rsplit(".", 1)[-1]
    if _NO_WEIGHTS_NAME.search(last) or objects.kind_of(receiver) in _NO_WEIGHTS:
        return None
    assign = keyword_arg(call, "assign")
    if assign is not None and not (isinstance(assign.value, cst.Name) and assign.value.value == "False"):
        return None  # the loaded tensors become the parameters: their device matters
    positional = positional_args(call)
    return keyword_arg(call, "state_dict") or (positional[0] if positional else None)


def _map_location(load: cst.Call) -> cst.BaseExpression | None:
    """The ``map_location`` ``load`` is given, by keyword or as its second
    positional argument; None when it has none."""
    given = keyword_arg(load, "map_location")
    positional = positional_args(load)
    if given is not None:
        return given.value
    return positional[1].value if len(positional) >= 2 else None


def _param_names(fn: cst.FunctionDef) -> frozenset[str]:
    params = (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)
    return frozenset(p.name.value for p in params)


def _spelled(base: cst.BaseExpression, relative: dict[str, str]) -> str | None:
    """``base`` as the summary spells it, through a relative import of its head."""
    name = dotted_name(base)
    if name is None:
        return None
    head, _, rest = name.partition(".")
    bound = relative.get(head)
    return None if bound is None else bound + (f".{rest}" if rest else "")


class LoadWithoutMapLocation(Rule):
    """
    ## What it does
    Flags `torch.load(f)` without `map_location` (by keyword or as the second
    positional argument) whose result is passed to `load_state_dict`, either
    directly or through a variable of the same function, also picked apart on
    the way: a key (`ck["model"]`, `ck.get("model")`), a comprehension keeping
    every value it reads (`{k[7:]: v for k, v in ck.items()}`), or merged into
    another dict (`model_dict.update(ck)`), or copied into one by a loop (`for
    k, v in ck.items(): d[k[7:]] = v`, also in its `if` and `try` blocks and
    reading an entry back, `try: d[k] = ck["module." + k] except KeyError: d[k]
    = v`), or handed to a function of the module that returns such a view of
    it (`sd = filter_param_dict(sd, include)`).

    ## Why it matters
    Without `map_location`, every tensor is restored to the device it was
    saved from. A checkpoint saved during GPU training is therefore first
    materialised on that GPU, and `load_state_dict` then copies it into the
    model's own parameters: for a moment the GPU holds the weights twice (and
    the optimizer state, if the checkpoint has it), which is often what tips a
    resumed run into out-of-memory. On a machine without that GPU (a CPU-only
    box, a different device index) the load fails outright.

    ## Example
    ```python
    model.load_state_dict(torch.load("best.pt"))
    ```

    ## Use instead
    ```python
    model.load_state_dict(torch.load("best.pt", map_location="cpu"))
    ```
    `load_state_dict` copies the values into the parameters wherever they
    live, so loading to the CPU first costs no extra GPU memory.

    ## Fix safety
    Safe when the result goes straight into `load_state_dict` (optionally
    indexed, as in `torch.load(p)["model"]` or `torch.load(p).get("model")`):
    `load_state_dict` copies values into existing parameters, so their device is
    unchanged. No fix when the result is first stored in a variable or passed
    through a helper (`load_state_dict(convert_state_dict(torch.load(p)))`):
    other parts of the checkpoint may be used as tensors on the device they were
    saved from. Calls with `load_state_dict(..., assign=True)` are not reported,
    since the loaded tensors then become the parameters, nor loads into an LR
    scheduler, a `GradScaler`, a sampler, a data loader or training bookkeeping
    (early stopping, meters, trackers, callbacks), whose state holds no weights.
    `torch.load(p, **kwargs)` with a local dict lacking `map_location` on some
    path (`kwargs = {}` unless `cpu`) has no fix: it would clash on the other.

    ## When it stays silent
    Not reported either: loads into a model the same scope builds (with no
    device, by nothing known to move it: an imported class or builder, a builder
    named by `eval`, a parameter's method), hands to nothing that may move it,
    then moves itself after the load (`student = student.cuda()`, `model =
    nn.DataParallel(model).cuda()`): it is on the CPU at the load; loads in a file that writes its checkpoints from CPU tensors only
    (`torch.save(net.cpu().state_dict(), p)`, or `model.cpu()` /
    `model.eval().cpu()` before `torch.save(model.state_dict(), p)`, `{k:
    v.cpu() for k, v in sd.items()}`, FSDP's full state dict gathered with
    `FullStateDictConfig(offload_to_cpu=True)`, a loop replacing every entry by
    its value on the CPU, `for k, v in sd.items(): sd[k] = v.cpu()`): those
    files hold CPU tensors; so does a load read at a key
    (`save_dict["model_state_dict"]`) that only such saves of the file write,
    every other save a dict literal without it or an optimizer's bare state;
    into a model (a module by its kind) the saves that
    count are those that may hold a model's state, so an optimizer's state saved
    from the GPU beside them keeps only the optimizer's loads reported (across
    modules, a save beside the load whose file name, or a formatted pattern of
    it such as `"{}_{}.pkl".format(name, task)`, may be the loaded one, when
    every such save writes a CPU state or a dict of CPU states and plain
    values); nor loads into a model still on the CPU (built in the same
    function, in a block around the load, by a constructor known to build on the
    CPU: `torchvision.models.resnet50()`, an entry of its namespace
    (`models.__dict__[arch]()`), `timm.create_model`, `from_pretrained`
    without `device_map` (its one positional argument a name or path, even a
    name handed in), a class of the project that moves nothing, named directly,
    through its package (`vocoders.Generator`), imported in a function (`from
    models.nets import Net as net` in `main()`, or one name imported to such a
    class in each branch, the name bound no other way in the module) or picked
    from a table of such classes bound once, at module level or in the function
    around the load (`ARCHS[name](10)`), or in another module of the project
    (`model_dict[name](...)`), fetched with `getattr(module, name)` (or
    `models.__dict__[name]`) from a project module whose every class moves
    nothing (importing no class-like name but torch's or torchvision's, `from
    torchvision.models.resnet import Bottleneck`), or from a package that only
    star-imports such classes and builders (`from .vgg import *`; a builder may
    pass a class `make_layers(...)`, a `nn.Sequential(*layers)` of a local list
    it only fills with fresh torch.nn layers), or picked by a project function
    whose every return is `None` or one class of a module-level registry it only
    fills with such classes, or with every class of a module whose every class
    moves nothing (`Model = load_model(name)` over `MODELS.extend([getattr(m, a)
    for a in dir(m)])`; a registry handed to a call or filled otherwise is not
    known), or a builder named through `eval` of a string when every function of
    that name in the project builds on the CPU (a class whose `__init__` takes
    `**kwargs` and never reads them counts; a project function returning a fresh
    torch.nn layer built from constants, `return nn.Linear(10, 2)`, is such a
    builder in other modules); `self` in the `__init__` of a class that moves
    nothing (bases included), a model under construction, and in the `__init__`
    of any `torch.nn` subclass (only `torch.nn` bases, no decorator or
    metaclass, no `device=` in it, subclassed nowhere in the module) up to its
    first move: `self.cuda()`, a part built with `.to(dev)`, a method of its own
    that moves, hands `self` or a part of it on, or gives a `device=`
    (pixel2style2pixel's `pSp.__init__` loads through `self.load_weights()`
    before anything moves it); `self` in a method named for loading
    (`load_pretrained_model`) whose every use in the project is a call on a
    model just built so; `self.model` in any method of a plain class (no base
    but `object`, not subclassed) whose every store of it is a model just built
    so, and whose methods only call it or a method that leaves it in place
    (`eval`, `state_dict`...), never move, hand over or alias it; no other code
    of the module spells it and no other module of the project switches, moves
    or hands it over (`trainer.model.cuda()`; without the project, private
    attributes only); or a parameter to which every caller in the project,
    notebooks included, passes a model just built so (built in every arm of an
    `if`, or rebuilt on the CPU by a later `if` without `else`); neither moved
    nor handed to a call before the load, other than a project function that
    moves nothing (`fc.train(model)`) or `apply`, or a class rebuilding a part
    of it from its own parts with no device argument (`model.cls =
    BertOnlyMLMHead(model.config,
    model.bert.embeddings.word_embeddings.weight)`); not a wrapper such as
    `DataParallel(net)` (`AveragedModel(net)` without a device copies a CPU
    model on the CPU): an argument that is a number, options or a part of the
    checkpoint is no model); a checkpoint handed to a function of the module
    that loads it only into such a model (sgan's `get_generator(checkpoint)`:
    build, load, then `.cuda()`) is not reported either. A class that moves only
    tensors it builds into plain attributes (`self.noise =
    torch.randn(n).cuda()`, in no state dict, also through a conditional), into
    items of a plain dict attribute (`self._targets[k] = labels`, no
    `ParameterDict` in the class) or into locals moves nothing. A module-level
    model of another project module, built there on the CPU (`vgg =
    nn.Sequential(...)` in `net.py`) and named nowhere else in it, read at
    module level (`vgg = net.vgg`, `from net import vgg`) and not moved before
    the load, is on the CPU too. A method of the model that the project defines,
    in every class defining it, without moving, handing over or setting the
    model or a part of it (psa's `param_groups = model.get_parameter_groups()`,
    read by the project stage) leaves it on the CPU; one handing `self` to other
    code does not. A constructor bound nowhere in the module (never imported, no
    star import), or a class picked by name from a module named at run time
    (`getattr(importlib.import_module(name), "CAM")()`) or from the module's own
    names (`Model = eval(args.model_type)`), is not known: nothing is claimed;
    so is, when the project is read, a class that a module putting folders on
    `sys.path` imports from a module the project does not hold
    (`tsm_online.MobileNetV2(...)` after
    `sys.path.append("tf_models/research/slim")` and `import mobilenet_v2_tsm_v2
    as tsm_online`: code outside the project). A torch optimizer over such a
    model's parameters (`Adam(net.parameters())`, or parameter groups drawn from
    its parts: `{"params": get_parameters_conv(net.model, "weight")}`) loads its
    state onto the CPU too while the model has not moved, and so does one a
    project helper that moves nothing builds over it (`optimizer =
    make_optimizer(cfg, model)`, handed no other model and no device); a torch
    LR scheduler built on the optimizer moves nothing. A method that loads into
    `self` (`from_pretrained(self, path)`) whose every call in another module is
    on a model that module has just built there with a class or builder that
    moves nothing, not named since, nor in a loop (`model = Net(...);
    model.from_pretrained(p); model.to(device)`), loads into a model on the CPU;
    one call on anything else keeps it reported. A load handed to a helper known
    to call `load_state_dict` on it (a function of this file whose body does, or
    peft's `set_peft_model_state_dict(model, state_dict)`) is reported, without
    a fix; so is one handed to a function of another module of the project that
    passes that parameter on to `load_state_dict` (through keys, copying
    comprehensions, `model_dict.update(sd)`; or copies it entry by entry, `own
    = model.state_dict()` then `for k, v in sd.items(): own[k].copy_(v)`; also
    named through a package's `from .util import *`) of a model on a device: one it
    moved itself (`model = make(...)` with `make` calling `model.cuda()`), or
    the model the call hands it, moved before the call or built by a project
    function returning a model it moved (`snet = define_tsnet(...)` returning
    `DataParallel(net).cuda()`, handed no literal `False`/`None`/`0`; a move
    under `if cuda:` with `cuda=False` by default does not count); a model not
    known to be on a device keeps it silent. A `load_state_dict` held in a name
    and called through it (`load_func = self.model.load_state_dict if ... else
    self.model.module.load_state_dict; load_func(ck)`, every binding the same
    model's) loads into that model, reported when the model was moved to a
    device before (in `__init__` too, from a project function returning a
    model it moved, or one returning such a function's model). A pickled module's
    `ck["model"].state_dict()` holds the loaded tensors too; drawn so, it is
    reported only into a model moved to a device before the load (the pickled
    module's place says nothing of the model it is loaded into). So is a load a
    function of this file returns (`return torch.load(f)`, or a name bound only
    to such loads, a load with `map_location` on another branch included: `if
    use_cuda: ck = torch.load(p) else: ck = torch.load(p, map_location=...)`)
    when a caller in this file feeds that return value to `load_state_dict` of a
    model not known to be on the CPU (the helper's other callers may want the
    tensors where they were), or when a caller in another module of the project
    loads it into a model it moved to a device earlier in the same function
    (`model = nn.DataParallel(model).cuda()` ...
    `model.module.load_state_dict(load_checkpoint(p)["state_dict"])`); the
    message names that caller. When another caller of that function loads its
    value into a model not known to be on a device (a resume into the model
    still on the CPU), the load in the helper is not reported (the helper alone
    does not say which of its callers doubles the weights): the caller loading
    it into a model on a device is, at its call, without a fix, the message
    naming the load.

    A class called on a module imported at run time (`arch =
    __import__("networks." + name)`, `importlib.import_module`), `arch.Decoder(...)`,
    builds on the CPU when every module of the project defining `Decoder`
    defines a class that moves nothing (or a CPU builder), as a name handed to
    `eval`; and a model built, loaded, then moved in one block (`if __name__
    == "__main__":`) is read in order there, as in a function body.

    A module-level switch written as a literal decides the device: after
    `use_cuda = False` and `device = torch.device("cuda" if use_cuda else
    "cpu")` (each name bound nowhere else in the module), `.to(device)` moves to
    the CPU, and a model built and moved so (`build().to(device)`) is on the CPU
    at the load (wavenet_vocoder's tests).

    A function of this file whose every call passes one literal to a
    parameter (`init_nets(..., device="cpu")`, the default counting for a call
    that leaves it out) runs only the arms of its `if` statements that literal
    picks (`if device == "cpu": net.to(device) else: net = net.cuda()`), and
    the parameter holds the CPU device there: the dict of nets it fills and
    returns, alone or in a tuple (`nets, meta = init_nets(...)`), holds CPU
    models, and so does an item picked from it (`nets[0]`) or a loop over its
    items (MOON's `main.py`). A call passing a name, `**kwargs`, another
    literal (`device="cuda"`), a call from another module, or the function
    used as a value leaves every arm possible. `net.to("cpu")` and
    `Net(device="cpu")` leave a model on the CPU.

    A method of a class of this file returning a load (`return
    torch.load(self.fname)`) whose every call in another module, on an instance
    built there, loads the value into a model that module moved to a device
    (`model.load_state_dict(early_stopping.load_checkpoint())` after
    `model.cuda()`) is reported at the load, without a fix, naming those calls;
    a call of the method's name in this file keeps it silent.

    A project none of whose modules moves anything to a device (no `.cuda()`,
    no `.to(device)`, no `device=`, no `DataParallel`, no `set_device`, no
    import of a framework that moves models for you: Lightning, accelerate,
    the Hugging Face `Trainer`, ignite...) keeps its models and checkpoints on
    the CPU: no load there is reported (torchMoji). One such call anywhere in
    the project, or a device word in a module without a training word, keeps
    the rule on.

    `DataParallel(model)` moves the model to `cuda:0` when one GPU is visible and
    leaves it on the CPU with several: whether a load into it doubles the weights
    depends on the machine. torch's `DataParallel` given no `device_ids`, or
    ones not written out as a single device (`range(args.ngpu)`), keeps a model
    built on the CPU there, as a `torch.nn` container does (vnet's resume; the
    bench decided these negative after obman). A class of the project that copies
    `DataParallel`'s move (`if len(self.device_ids) == 1: self.module.cuda(...)`,
    CornerNet's) is read the same. A load in a helper of another module (the checkpoint
    its own local, gone when it returns) whose every caller hands it a model
    built in the calling function, wrapped (`model = nn.DataParallel(model)`, no
    `device_ids`) and not moved before the call, and, for an optimizer
    parameter, an optimizer over that model's parameters or nothing (its
    default `None`), stays silent (obman_train's `modelio.load_checkpoint`).

    ## Details
    A `map_location` that is `None` whenever CUDA is available (`map_location =
    None if torch.cuda.is_available() else "cpu"`, a literal `None`, `None if
    use_gpu else ...`) maps nothing on a GPU machine: the load is read as one
    without it, and reported without a fix.

    A load drawn so (other than a key looked up where it is loaded or passed, or
    bound to a name first: `sd = ck["state_dict"]`, reported without a fix) is
    reported only when the model was moved to a device before it in the same
    function (`model = nn.DataParallel(model).cuda()`), or in `__init__` for
    `self.model`, or when it is a parameter of a function to which every known
    caller hands a model it moved to a device before the call
    (`load_checkpoint(path, model)` after `model = Wav2Lip().to(device)`;
    callers in other modules count, their model bound from `.to(device)` or
    from project functions returning a model they moved, or another name for
    it, `pure = model.module if wrapped else model`; a caller of this module
    handing on a parameter of its own that every one of its callers so moved
    counts too): a model built by a config or handed in as a parameter of
    unknown callers may still be on the CPU, and a move inside a function
    defined above a script's load runs only when called.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.load.html
    - https://pytorch.org/tutorials/beginner/saving_loading_models.html#saving-loading-model-across-devices
    """

    code = "MEM701"
    name = "load-without-map-location"
    message = (
        "torch.load without map_location restores tensors to the GPU they were saved from, "
        'a second copy of the weights next to the model\'s; load them with map_location="cpu"'
    )
    fix_safety = Safety.SAFE
    project_facts = (
        "Whether any module of the project may put anything on a device or imports a framework that "
        "does (ProjectView.moves_nothing): where none does, no load is reported. "
        "Which model classes imported from other modules of the project move nothing to a device (no "
        "`.to(`/`.cuda(` in their code, nor in the project classes they derive from or build: a submodule "
        "whose `__init__` calls `self.lstm.cuda()` counts): a model built from one, or returned by a builder "
        "function of the project (`return MSC(base=DeepLabV2(...))`, classes reached through star imports "
        "too), is on the CPU at the load, and the load is not reported; its own methods, inherited ones "
        "included, leave it there. Whether another module uses the name of a method that loads into `self` "
        "(`net.load_pretrained_model()`): if none does, its calls here are all its calls. Whether another "
        "module switches, moves or hands over an attribute of a plain class (`trainer.model.cuda()`): if none "
        "does, a model its methods build on the CPU and only call stays there. Tables of such "
        "classes or builders in another module (`from models import model_dict`, `model_dict[name](...)`); "
        "modules whose every class moves nothing, for a class fetched with `getattr(models.zoo, name)`; "
        "in a module that puts folders on `sys.path`, a class imported from a module the project does not hold "
        "is not known to move itself: a fresh one not moved before the load is not claimed; "
        "a name bound only by imports inside functions (`from models.nets import Net as net` in `main()`), "
        "to one such class or to several, each such, names them as a module-level import would; "
        "an import rebound to the model built from it (`crnn = crnn.CRNN(...)` after `import models.crnn as "
        "crnn`) still names that class; "
        "every project function named by a string handed to `eval` "
        "(`eval('models.' + NAME + '.get_pose_net')(cfg)`) being a builder on the CPU. "
        "Functions returning one class of a module-level registry (`load_model(name)` over `MODELS`, filled "
        "from the classes of project modules): a class they give, called, builds on the CPU when every source "
        "of the registry is a class or builder that moves nothing, or a module whose every class does. A model's tree of project "
        "classes is followed up to twelve classes deep. "
        "A checkpoint file the load names (a string literal in its path, or in what a name of the path was "
        "bound to in the same function, `osp.join(respth, 'model_final.pth')`) that modules of the loading "
        "module's own folder save, every one of them from a state on the CPU (`net.cpu()` before "
        "`state = net.state_dict()`): nothing is reported. "
        "The callers, in other modules, of a module-level function that returns a load (`return torch.load(f)`, "
        "or a name bound only to one): when one of them loads the returned value into a model it moved to a "
        "device earlier in the same function (`model = nn.DataParallel(model).cuda()`, then "
        "`model.module.load_state_dict(checkpoint['state_dict'])` with `checkpoint = load_checkpoint(p)`), the "
        "load is reported, without a fix, naming that caller; a model not known to be moved keeps it silent. "
        "Which parameter of a function of another module reaches `load_state_dict` and which receives it (or "
        "a model the function moved to a device itself), and which functions return a model they moved to a "
        "device: a load handed to such a helper is reported when the receiving model is on a device. "
        "The models each call of a function of this module hands over from another module on a device "
        "(`get_ckpt_model(path, model, device)` after `model = ODE_RNN(...).to(device)`, or `model` bound "
        "only from project functions returning a model they moved): a load drawn into that parameter is "
        "reported, without a fix, when every caller does so, naming them. "
        "Which functions of other modules this module calls return a `torch.load` without `map_location` "
        "that some caller in the project loads into a model not on a device: a call of one here whose value "
        "goes into a model moved to a device before is reported at the call, naming the load. "
        "The calls, in other modules, of this module's classes' methods on instances built there whose value "
        "is loaded into a model moved to a device (`model.load_state_dict(early_stopping.load_checkpoint())` "
        "after `model.cuda()`, ProjectView.gpu_method_callers): a method returning an unmapped load that "
        "every such call feeds so is reported at the load."
    )

    def __init__(self, context) -> None:
        super().__init__(context)
        # One frame per function, class or module: for each name, its
        # assignments in source order, as (the block holding it, the loads stored).
        self._frames: list[dict[str, list[tuple[cst.CSTNode | None, list[cst.Call]]]]] = []
        self._reported: set[int] = set()
        self._cpu_checkpoints = False
        # Functions of this module that return a load (``return torch.load(f)``,
        # or a name bound to one): a call of one is that load, for its callers.
        self._returning: dict[cst.FunctionDef, list[cst.Call]] = {}
        # Those returning a tuple: per position, the loads it holds there
        # (``return epoch, state_dict``), for a caller unpacking it.
        self._returning_items: dict[cst.FunctionDef, dict[int, list[cst.Call]]] = {}
        self._device_params: DeviceParams | None = None  # made on first need
        # Calls of another module's function returning an unmapped load
        # (ProjectView.mixed_loaders) held by a name: the message for each.
        self._remote: dict[int, str] = {}
        self._cpu_devices: frozenset[str] | None = None  # made on first need (_cpu_device_names)

    def report(self, node: cst.CSTNode, message: str | None = None, fix: Fix | None = None) -> None:
        # A load given a ``map_location`` that is ``None`` on the CUDA path
        # (gpu_none_locations.py): say so, the call does spell one.
        if isinstance(node, cst.Call) and _map_location(node) is not None:
            message = (message or self.message).replace(
                "torch.load without map_location", "torch.load with a map_location that is None when CUDA is on", 1
            )
        super().report(node, message, fix)

    def _push(self) -> None:
        self._frames.append({})

    def _pop(self) -> None:
        self._frames.pop()

    def visit_Module(self, node: cst.Module) -> None:
        self._push()
        # A file that writes its checkpoints from CPU tensors only reads back
        # CPU tensors: torch.load makes no GPU copy there.
        self._cpu_checkpoints = self.facts.checkpoints.saves_only_cpu
        # No module of the project moves anything to a GPU (ProjectView.moves_nothing):
        # every model and checkpoint is on the CPU, and no load doubles one.
        project = self.facts.project
        self._cpu_checkpoints = self._cpu_checkpoints or (project is not None and project.moves_nothing)
        if not self._cpu_checkpoints:
            returns = _ReturnedLoads(self._is_load_without_map_location, self._is_load)
            visit_fast(node, returns)
            self._returning = {fn: loads for fn, loads in returns.found.items() if loads}
            self._returning_items = returns.items
            self._fed_elsewhere(node)
            self._methods_fed_elsewhere(node)

    def _fed_elsewhere(self, module: cst.Module) -> None:
        """A module-level function of this file returning a load that a
        caller in another module loads into a model it moved to a device
        (``checkpoint = load_checkpoint(p)`` then
        ``model.module.load_state_dict(checkpoint["state_dict"])`` after
        ``model.cuda()``; project/state_feeds.py): reported at the load,
        without a fix, naming that caller."""
        project = self.facts.project
        if project is None or not project.callers or not (self._returning or self._returning_items):
            return
        for fn in module.body:
            if not isinstance(fn, cst.FunctionDef):
                continue
            # The value itself, or each element of a returned tuple (-1: the value).
            held = {-1: self._returning[fn]} if self._returning.get(fn) else self._returning_items.get(fn, {})
            callers = project.callers_of(fn.name.value) if held else ()
            for item, loads in held.items():
                sites = [c for c in callers if (c.gpu_state if item < 0 else item in c.gpu_items)]
                if not sites or len(sites) < len(callers):
                    # Mixed: some caller loads it into a model not on a GPU; the
                    # helper does not say which doubles the weights, the GPU
                    # caller is reported at its call (ProjectView.mixed_loaders).
                    continue
                where = ", ".join(c.where() for c in sites[:3]) + (", ..." if len(sites) > 3 else "")
                message = f"{self.message} (returned by {fn.name.value}, loaded into a model on a GPU at {where})"
                for load in loads:
                    if id(load) not in self._reported and not self._reads_cpu_checkpoint(load):
                        self._reported.add(id(load))
                        self.report(load, message)

    def _methods_fed_elsewhere(self, module: cst.Module) -> None:
        """A method of a class of this file returning a load (DropEdge's
        ``EarlyStopping.load_checkpoint``: ``return torch.load(self.fname)``)
        whose every call in another module, on an instance built there, loads
        the value into a model that module moved to a device
        (``model.load_state_dict(early_stopping.load_checkpoint())`` after
        ``model.cuda()``; ProjectView.gpu_method_callers): reported at the
        load, without a fix, naming those callers. A call of the method's
        name in this file (``self.load_checkpoint()``) is one the project
        stage does not judge: the load stays silent."""
        project = self.facts.project
        if project is None or not project.gpu_method_callers or not self._returning:
            return
        for cls in module.body:
            if not isinstance(cls, cst.ClassDef) or not isinstance(cls.body, cst.IndentedBlock):
                continue
            for fn in cls.body.body:
                loads = self._returning.get(fn) if isinstance(fn, cst.FunctionDef) else None
                if not loads:
                    continue
                assert isinstance(fn, cst.FunctionDef)
                qualified = f"{cls.name.value}.{fn.name.value}"
                sites = project.gpu_method_callers_of(qualified)
                if not sites or set(sites) != set(project.method_callers_of(qualified)):
                    continue  # some call loads it into a model not known on a device
                if spells_attribute(module, (fn.name.value,)):
                    continue
                where = ", ".join(sites[:3]) + (", ..." if len(sites) > 3 else "")
                message = f"{self.message} (returned by {qualified}, loaded into a model on a GPU at {where})"
                for load in loads:
                    if id(load) not in self._reported and not self._reads_cpu_checkpoint(load):
                        self._reported.add(id(load))
                        self.report(load, message)

    def leave_Module(self, original_node: cst.Module) -> None:
        self._pop()
        # DeviceParams holds this rule's bound method: a cycle that would keep
        # the file's tree alive until the cyclic collector runs.
        self._device_params = None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._push()

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._push()

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        # A new value replaces the load: ``state = torch.load(p, map_location="cpu")``
        # after ``state = torch.load(cache)`` feeds only the second one.
        # A part of a load (``sd = sd["state_dict"]``, ``sd = {k[7:]: v for k,
        # v in sd.items()}``) keeps its tensors: the new value holds the loads
        # that reach its source here, read before the assignment takes effect.
        block = self.parent(self.parent(node))
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                # A load of the value itself is appended later, not drawn.
                kept: list[cst.Call] = self._key_of_load(node.value, node)
                if not kept:
                    drawn = self._drawn_loads(node.value, node)
                    kept = _DrawnLoads(drawn) if drawn else []
                self._frames[-1].setdefault(target.target.value, []).append((block, kept))
            elif isinstance(target.target, (cst.Tuple, cst.List)) and isinstance(node.value, cst.Call):
                # ``epoch, weights = load_checkpoint(p)``: rebound, to what
                # ``_unpacked_load`` may add of a tuple a helper returns.
                for element in target.target.elements:
                    if isinstance(element.value, cst.Name):
                        self._frames[-1].setdefault(element.value.value, []).append((block, []))

    def _key_of_load(self, expr: cst.BaseExpression, use: cst.CSTNode) -> list[cst.Call]:
        """``state_dict = check_point["state_dict"]`` (or ``.get("state_dict")``)
        of a name holding loads not drawn on their way: the same tensors as
        ``check_point["state_dict"]`` handed straight to ``load_state_dict``,
        so not drawn either. A pickled module's ``.state_dict()`` is (``_fed``)."""
        source = key_source(expr)
        if source is expr or not isinstance(source, cst.Name) or through_module(expr):
            return []
        if not self._frames[-1].get(source.value):
            return []
        marked = self._reaching_marked(source.value, use)
        if not marked or any(drawn for _load, drawn in marked):
            return []
        return [load for load, _drawn in marked]

    def _drawn_loads(self, expr: cst.BaseExpression, use: cst.CSTNode) -> list[cst.Call]:
        """The loads ``expr`` passes on unchanged at ``use``: a name holding
        one, or a key or a copying comprehension of it (state_flow.py)."""
        source = drawn_from(expr)
        if isinstance(source, cst.Call):
            source = self._passed_arg(source)
        if isinstance(source, cst.Name) and self._frames[-1].get(source.value):
            return [load for load, _drawn in self._reaching_marked(source.value, use)]
        return []

    def _passed_arg(self, call: cst.Call) -> cst.BaseExpression:
        """What ``filter_param_dict(sd, ...)`` draws from: ``sd`` (drawn on
        its way) when the function of this module returns a view of that
        parameter (passed_dicts.py); ``call`` itself otherwise."""
        fn = self.facts.calls.resolve(call)
        param = passed_param(fn) if fn is not None else None
        if fn is None or param is None or any(a.star for a in call.args):
            return call
        arg = next((a for a, name in bound_params(call, fn) if name == param), None)
        return drawn_from(arg.value) if arg is not None else call

    def _fed(self, expr: cst.BaseExpression, use: cst.CSTNode) -> list[tuple[cst.Call, bool]]:
        """The loads the ``state_dict`` argument ``expr`` of ``use`` holds,
        each with whether it was drawn on its way (a name bound to a key or
        a copy of it, a merge): ``sd`` and ``sd["model"]`` of ``sd =
        torch.load(p)`` are not drawn, ``{k: v for k, v in sd.items()}`` is."""
        source = key_source(expr)
        if isinstance(source, cst.Name):
            marked = self._reaching_marked(source.value, use) if self._frames[-1].get(source.value) else []
            # A pickled module's ``.state_dict()``: drawn, reported only into a model moved before.
            return [(load, True) for load, _ in marked] if through_module(expr) else marked
        return [(load, True) for load in self._drawn_loads(source, use)]

    def _updated(self, call: cst.Call) -> None:
        """``model_dict.update(sd)``: ``model_dict`` now holds the tensors of
        the loads in ``sd`` (the pretrained weights merged into a model's own
        state dict, then loaded)."""
        func = call.func
        if not (
            isinstance(func, cst.Attribute)
            and func.attr.value == "update"
            and isinstance(func.value, cst.Name)
            and len(call.args) == 1
            and call.args[0].keyword is None
            and not call.args[0].star
        ):
            return
        loads = self._drawn_loads(call.args[0].value, call)
        if not loads:
            return
        # An entry in no block adds to what the name held, replacing nothing.
        self._frames[-1].setdefault(func.value.value, []).append((None, _DrawnLoads(loads)))

    def visit_For(self, node: cst.For) -> None:
        """``for k, v in sd.items(): d[k[7:]] = v``: ``d`` now holds the
        tensors of the loads in ``sd``, renamed (state_flow.loop_copies)."""
        for name, source in loop_copies(node):
            loads = self._drawn_loads(source, node)
            if loads:
                # In no block: adds to what ``d`` held, replacing nothing.
                self._frames[-1].setdefault(name, []).append((None, _DrawnLoads(loads)))

    def _reaching(self, name: str, use: cst.CSTNode) -> list[cst.Call]:
        """The loads that may still be in ``name`` at ``use``, not drawn on
        their way (``_fed``): what a helper handed ``name`` may load."""
        return [load for load, drawn in self._reaching_marked(name, use) if not drawn and id(load) not in self._remote]

    def _reaching_marked(self, name: str, use: cst.CSTNode) -> list[tuple[cst.Call, bool]]:
        """The loads that may still be in ``name`` at ``use``: back from the
        latest assignment, up to one in a block that encloses the use
        (a conditional reassignment keeps the earlier load possible); each
        with whether it was drawn from another value (``_DrawnLoads``)."""
        enclosing = set()
        cur = self.parent(use)
        while cur is not None:
            enclosing.add(id(cur))
            cur = self.parent(cur)
        loads: list[tuple[cst.Call, bool]] = []
        for block, stored in reversed(self._frames[-1].get(name, [])):
            drawn = isinstance(stored, _DrawnLoads)
            loads.extend((load, drawn) for load in stored)
            if id(block) in enclosing:
                break
        return loads

    def _bound_load(self, call: cst.Call) -> bool:
        """``load_func(checkpoint)`` with every binding of ``load_func`` in
        its scope the ``load_state_dict`` of one model (SRFBN's ``load_func =
        self.model.load_state_dict if ... else self.model.module.load_state_dict``):
        a load into that model. Judged only where the model was moved to a
        device before (``_placed_before``): the analysis of a model still on
        the CPU reads direct loads only. True when ``call`` is such a load."""
        receiver = bound_load_receiver(call, self.facts.objects)
        if receiver is None:
            return False
        positional = positional_args(call)
        arg = keyword_arg(call, "state_dict") or (positional[0] if positional else None)
        if arg is None or self._cpu_saved_key(arg.value) or not self._placed_before(receiver, call):
            return True
        checkpoints = self.facts.checkpoints
        cpu_writers = checkpoints.saves_only_cpu_models or (
            checkpoints.saves_no_models and self._in_cpu_saving_family(call)
        )
        if cpu_writers and _a_model(receiver, self.facts.objects.kind_of(receiver)):
            return True
        fed = self._fed(arg.value, call)
        if self._remote:
            fed = self._remote_fed(fed, call)
        for load, _drawn in fed:
            if id(load) not in self._reported and not self._reads_cpu_checkpoint(load):
                self._reported.add(id(load))
                self.report(load)
        return True

    def _moved_before(self, call: cst.Call) -> bool:
        """The model ``call`` loads into (``model``, ``model.module``,
        ``self.model``) was moved to a device before it in the same
        function (``model = nn.DataParallel(model).cuda()``,
        ``model.to(device)``), or in ``__init__`` for an attribute of
        ``self``. A load drawn on its way (``_fed``) is reported only then:
        where the model is not known to be on a device, the copy may be the
        only one (a model built by a config, a parameter)."""
        assert isinstance(call.func, cst.Attribute)
        return self._placed_before(call.func.value, call)

    def _into_device_param(self, call: cst.Call) -> str | None:
        """``model.load_state_dict(sd)`` with ``model`` a parameter of the
        function around it to which every known caller hands a model it
        moved to a device (analysis/training/device_params.py): the rule's
        message, naming the callers in other modules; None when not known."""
        assert isinstance(call.func, cst.Attribute)
        param = (dotted_name(call.func.value) or "").partition(".")[0]
        fn = self.parent(call)
        while fn is not None and not isinstance(fn, (cst.FunctionDef, cst.ClassDef, cst.Module)):
            fn = self.parent(fn)
        if not param or not isinstance(fn, cst.FunctionDef):
            return None
        if self._device_params is None:
            self._device_params = DeviceParams(
                self.facts.module, self.facts.calls, self.facts.project, self._placed_before
            )
        where = self._device_params.callers(fn, param, call)
        if where is None:
            return None
        if not where:
            return self.message
        shown = ", ".join(where[:3]) + (", ..." if len(where) > 3 else "")
        return f"{self.message} (loaded into a model its callers put on a device: {shown})"

    def _placed_before(self, value: cst.BaseExpression, call: cst.CSTNode) -> bool:
        """``value`` (a model) was moved to a device before ``call`` in the
        same function, or in ``__init__`` for an attribute of ``self``; or
        bound from a project function returning a model it moved
        (``snet = define_tsnet(...)``, ProjectView.gpu_builders)."""
        # ``self.models[n]``: an item of a table of models; a move of any of
        # its items (``self.models["encoder"].to(self.device)``) counts.
        items = isinstance(value, cst.Subscript)
        receiver = dotted_name(value.value if isinstance(value, cst.Subscript) else value) or ""
        if receiver.endswith(".module"):
            receiver = receiver[: -len(".module")]
        if not receiver:
            return False
        scope = self.parent(call)
        while scope is not None and not isinstance(scope, (cst.FunctionDef, cst.Module)):
            scope = self.parent(scope)
        if scope is None:
            return False
        project = self.facts.project
        builders = frozenset(project.gpu_builders) if project is not None else frozenset()
        moves = _Moves(receiver, call, items, builders, scope, self._cpu_device_names())
        visit_fast(scope, moves)
        if moves.moved:
            return True
        if not receiver.startswith("self.") or not isinstance(scope, cst.FunctionDef):
            return False
        cls = self.facts.calls.class_of.get(scope)
        init = self.facts.calls.find_method(cls, "__init__") if cls is not None else None
        if init is None or init is scope:
            return False
        moves = _Moves(receiver, None, items, builders, scope=init, cpu_names=self._cpu_device_names())
        visit_fast(init, moves)
        return moves.moved

    def _cpu_device_names(self) -> frozenset[str]:
        """The module's names that hold the CPU device (cpu_devices.py:
        ``device = torch.device("cuda" if use_cuda else "cpu")`` after
        ``use_cuda = False``): ``.to(device)`` with one moves nothing to a GPU."""
        if self._cpu_devices is None:
            self._cpu_devices = cpu_device_names(self.facts.module)
        return self._cpu_devices

    def visit_Call(self, node: cst.Call) -> None:
        if self._cpu_checkpoints:
            return
        arg = _state_dict_arg(node, self.facts.objects)
        if arg is not None:
            if self.facts.checkpoints.into_cpu_model(node) or self._into_model_of_cpu_writers(node):
                return  # the model is still on the CPU, or its checkpoints are: it is not doubled on a GPU
            if self._moved_later(node):
                return
            if self._cpu_saved_key(arg.value):
                return
            fed = self._fed(arg.value, node)
            if self._remote:
                fed = self._remote_fed(fed, node)
            moved = any(drawn for _load, drawn in fed) and self._moved_before(node)
            message = None
            if not moved and any(drawn for _load, drawn in fed):
                message = self._into_device_param(node)
                moved = message is not None
            for load, drawn in fed:
                if id(load) not in self._reported and (moved or not drawn):
                    self._reported.add(id(load))
                    self.report(load, message if drawn and message else None)
            return
        if self._bound_load(node):
            return
        self._updated(node)
        if node.args and self.facts.calls.resolve(node) is not None:
            self._handed_to_helper(node)
        elif node.args and self.facts.project is not None and self.facts.project.state_loaders:
            self._handed_to_project(node)
        if (self._returning or self._returning_items) and self._helper_load(node):
            return
        if self.facts.project is not None and self.facts.project.mixed_loaders and self._remote_load(node):
            return
        if not self._is_load_without_map_location(node):
            return
        if self._reads_cpu_checkpoint(node):
            return  # every module of the project that writes this file saves CPU tensors
        _, outer = self._outer(node)
        if isinstance(outer, cst.Arg):
            helper = self.parent(outer)
            if isinstance(helper, cst.Call) and self.facts.checkpoints.helper_loads(helper, outer):
                # ``set_peft_model_state_dict(model, torch.load(p))``: the helper
                # loads it, and may use the checkpoint otherwise too (no fix).
                self.report(node)
                return
            if isinstance(helper, cst.Call):
                message = self._project_load(helper, outer)
                if message:
                    self.report(node, message)  # the helper may use the checkpoint otherwise too: no fix
                    return
        wrapped = False
        while isinstance(outer, cst.Arg) and self._converts(outer):
            # ``convert_state_dict(torch.load(p)["model"])``: the same tensors,
            # renamed or filtered, on their way to load_state_dict.
            _, outer = self._outer(self.parent(outer))
            wrapped = True
        if isinstance(outer, cst.Arg):
            target_call = self.parent(outer)
            if not isinstance(target_call, cst.Call) or _state_dict_arg(target_call, self.facts.objects) is not outer:
                return
            if self.facts.checkpoints.into_cpu_model(target_call) or self._into_model_of_cpu_writers(target_call):
                return  # the model is still on the CPU, or its checkpoints are: it is not doubled on a GPU
            if self._moved_later(target_call):
                return
            if not wrapped and self._cpu_saved_key(outer.value):
                return
            new = append_keyword(node, "map_location", cst.SimpleString('"cpu"'))
            if wrapped or has_star_kwargs(node) or _map_location(node) is not None:
                # the helper may keep other tensors of the checkpoint; a ``**kwargs``
                # holding map_location on some path would clash with the keyword
                self.report(node)
            else:
                self.report(node, fix=Fix('Pass `map_location="cpu"` to `torch.load`', ((node, new),)))
        elif isinstance(outer, cst.Assign) and len(outer.targets) == 1:
            target = outer.targets[0].target
            if isinstance(target, cst.Name):
                self._frames[-1][target.value][-1][1].append(node)

    def _moved_later(self, call: cst.Call) -> bool:
        """``net.load_state_dict(...)`` into a model this scope built with no
        device, then moves after the load (later_moves.py): on the CPU at the load."""
        assert isinstance(call.func, cst.Attribute)
        if not isinstance(call.func.value, cst.Name):
            return False
        scope = self.parent(call)
        while scope is not None and not isinstance(scope, (cst.FunctionDef, cst.Module, cst.ClassDef, cst.Lambda)):
            scope = self.parent(scope)
        if scope is None or isinstance(scope, (cst.ClassDef, cst.Lambda)):
            return False
        params = _param_names(scope) if isinstance(scope, cst.FunctionDef) else frozenset()
        stays = self.facts.checkpoints.stays
        name = call.func.value.value
        # The innermost block first (``if __name__ == "__main__":``), then each around it.
        return any(
            moved_after_load(body, stmt, name, lambda func: self._may_move_itself(func, params), stays)
            for stmt, body in enclosing_blocks(call, scope, self.parent)
        )

    def _may_move_itself(self, func: cst.BaseExpression, params: frozenset[str]) -> bool:
        """``func(...)`` may build a model on a device: a class or function of
        this module not known to build on the CPU (its code moves), a model
        class of the project that moves, or a project function returning a
        model it moved. Only a parameter's method (``config.init_obj``) is out
        of view; an ``eval`` spelling or an import must be a builder the
        project shows building on the CPU (one candidate that moves, a class
        handing ``**kwargs`` on, a library's class: it may move)."""
        if isinstance(func, cst.Call):
            return not self.facts.checkpoints.builds_on_cpu(func)  # ``eval("models." + name + ".get_net")(cfg)``
        name = dotted_name(func)
        if name is None:
            return True
        project = self.facts.project
        if project is not None and (
            name in project.gpu_builders or name in project.model_classes and name not in project.cpu_classes
        ):
            return True
        head = name.partition(".")[0]
        if "." in name and head in params:
            return False  # ``config.init_obj(...)``: a parameter's method, out of view
        return not self.facts.checkpoints.builds_on_cpu(func)

    def _helper_load(self, call: cst.Call) -> bool:
        """``state = load_checkpoint(p)`` / ``model.load_state_dict(
        load_checkpoint(p)["model"])`` with ``load_checkpoint`` a function of
        this module returning a ``torch.load`` without ``map_location``: its
        loads reach this use. Reported at the load, without a fix (the helper
        serves its other callers too)."""
        fn = self.facts.calls.resolve(call)
        if fn is not None and fn in self._returning_items:
            return self._unpacked_load(call, self._returning_items[fn])
        loads = [ld for ld in self._returning.get(fn, ()) if not self._reads_cpu_checkpoint(ld)] if fn else []
        if not loads:
            return False
        _, outer = self._outer(call)
        while isinstance(outer, cst.Arg) and self._converts(outer):
            _, outer = self._outer(self.parent(outer))
        if isinstance(outer, cst.Arg):
            target_call = self.parent(outer)
            if (
                isinstance(target_call, cst.Call)
                and _state_dict_arg(target_call, self.facts.objects) is outer
                and not self.facts.checkpoints.into_cpu_model(target_call)
                and not self._into_model_of_cpu_writers(target_call)
            ):
                for load in loads:
                    if id(load) not in self._reported:
                        self._reported.add(id(load))
                        self.report(load)
        elif isinstance(outer, cst.Assign) and len(outer.targets) == 1:
            target = outer.targets[0].target
            if isinstance(target, cst.Name):
                self._frames[-1][target.value][-1][1].extend(loads)
        return True

    def _unpacked_load(self, call: cst.Call, items: dict[int, list[cst.Call]]) -> bool:
        """``epoch, weights = load_checkpoint(p)`` with ``load_checkpoint``
        a function of this module returning ``epoch, state_dict``, the second
        a load: ``weights`` holds it, as ``_helper_load``'s name would."""
        outer = self.parent(call)
        if not (isinstance(outer, cst.Assign) and len(outer.targets) == 1 and outer.value is call):
            return True
        target = outer.targets[0].target
        if not isinstance(target, (cst.Tuple, cst.List)):
            return True
        for i, element in enumerate(target.elements):
            if isinstance(element.value, cst.Name) and i in items:
                loads = [ld for ld in items[i] if not self._reads_cpu_checkpoint(ld)]
                self._frames[-1][element.value.value][-1][1].extend(loads)
        return True

    def _remote_load(self, call: cst.Call) -> bool:
        """``checkpoint = load_checkpoint(p)`` then
        ``model.module.load_state_dict(checkpoint["state_dict"])`` with the
        model moved to a device before, ``load_checkpoint`` a function of
        another module returning ``torch.load(f)`` whose other callers load
        it into models not on a GPU (ProjectView.mixed_loaders): reported at
        this call, without a fix, naming the load. False when ``call`` is no
        such function's."""
        assert self.facts.project is not None
        written = dotted_name(call.func)
        where = self.facts.project.mixed_loader(written) if written else ""
        if not where:
            return False
        if self._reads_cpu_checkpoint(call):
            return True  # every writer of the file it names saves CPU tensors
        message = f"{self.message} (returned by {written}, {where}: loaded here into a model on a device)"
        _, outer = self._outer(call)
        while isinstance(outer, cst.Arg) and self._converts(outer):
            _, outer = self._outer(self.parent(outer))
        if isinstance(outer, cst.Arg):
            target = self.parent(outer)
            if (
                isinstance(target, cst.Call)
                and _state_dict_arg(target, self.facts.objects) is outer
                and not self.facts.checkpoints.into_cpu_model(target)
                and not self._into_model_of_cpu_writers(target)
                and self._moved_before(target)
            ):
                self._reported.add(id(call))
                self.report(call, message)
        elif isinstance(outer, cst.Assign) and len(outer.targets) == 1:
            name = outer.targets[0].target
            if isinstance(name, cst.Name):
                self._frames[-1][name.value][-1][1].append(call)
                self._remote[id(call)] = message
        return True

    def _remote_fed(self, fed: list[tuple[cst.Call, bool]], call: cst.Call) -> list[tuple[cst.Call, bool]]:
        """``fed`` without the calls of ``_remote_load``, each reported here
        when the model ``call`` loads into was moved to a device before."""
        kept = []
        for load, drawn in fed:
            message = self._remote.get(id(load))
            if message is None:
                kept.append((load, drawn))
            elif not drawn and id(load) not in self._reported and self._moved_before(call):
                self._reported.add(id(load))
                self.report(load, message)
        return kept

    def _handed_to_helper(self, call: cst.Call) -> None:
        """``state_dict = torch.load(f); self.parse_state_dict(state_dict)``:
        a name holding a load handed to a function of this module (a method
        of the class included) that passes that parameter on to
        ``load_state_dict`` (``v.load_state_dict(state_dict[k])``). The
        helper may use the checkpoint otherwise too: no fix."""
        checkpoints = self.facts.checkpoints
        for arg in call.args:
            value = arg.value
            if not isinstance(value, cst.Name) or not self._frames[-1].get(value.value):
                continue
            if not checkpoints.helper_loads(call, arg):
                continue
            for load in self._reaching(value.value, call):
                if id(load) not in self._reported:
                    self._reported.add(id(load))
                    self.report(load)

    def _project_load(self, call: cst.Call, arg: cst.Arg) -> str:
        """The message for a load handed as ``arg`` to a function of another
        project module that passes it on to ``load_state_dict`` of a model on
        a device: one that function moved itself, or the model this call
        hands it, moved before the call here (project/state_helpers.py);
        "" otherwise (a model not known to be on a device stays silent)."""
        found = self.facts.checkpoints.project_loader(call, arg)
        if found is None:
            return ""
        path, receivers = found
        for receiver in receivers:
            if receiver is None or self._placed_before(receiver, call):
                name = dotted_name(call.func)
                return f"{self.message} (handed to {name}, which loads it into a model on a device: {path})"
        return ""

    def _handed_to_project(self, call: cst.Call) -> None:
        """``checkpoint = torch.load(p); load_pretrained_model(snet,
        checkpoint["net"])`` with ``snet`` on a GPU and the helper in another
        module: reported at the load, without a fix."""
        for arg in call.args:
            source = key_source(arg.value)
            if not isinstance(source, cst.Name) or not self._frames[-1].get(source.value):
                continue
            loads = [ld for ld in self._reaching(source.value, call) if id(ld) not in self._reported]
            if not loads:
                continue
            message = self._project_load(call, arg)
            if not message:
                continue
            for load in loads:
                if not self._reads_cpu_checkpoint(load):
                    self._reported.add(id(load))
                    self.report(load, message)

    def _into_model_of_cpu_writers(self, call: cst.Call) -> bool:
        """``call`` (``x.load_state_dict(...)``) loads into a model (``network``,
        ``self.netG``: a module by its kind) and every save of this file that
        may write a model's state writes CPU tensors (a per-key ``.cpu()``
        loop included): an optimizer's state saved from the GPU beside them
        is read by the optimizer's loads only (cpu_saves.py). A receiver of
        another or unknown kind is judged by every save (``_cpu_checkpoints``).
        In a method of a class whose imported project bases save every model
        state from the CPU (project/family_saves.py), the file saving none
        itself, the family's saves count: a subclass loads what they write."""
        checkpoints = self.facts.checkpoints
        if not (checkpoints.saves_only_cpu_models or checkpoints.saves_no_models and self._in_cpu_saving_family(call)):
            return False
        assert isinstance(call.func, cst.Attribute)
        return _a_model(call.func.value, self.facts.objects.kind_of(call.func.value))

    def _cpu_saved_key(self, state: cst.BaseExpression) -> bool:
        """``model.load_state_dict(save_dict["model_state_dict"])`` where this
        module saves that key only in dicts of CPU states and plain values
        (decaNLP's ``{"model_state_dict": {k: v.cpu() ...}, "field": field}``,
        its optimizer's GPU state saved bare to another file): the file read
        at that key holds CPU tensors (cpu_saves.py ``_SavedKeys``)."""
        key = read_key(state)
        return key is not None and key in self.facts.checkpoints.cpu_saved_keys

    def _in_cpu_saving_family(self, call: cst.Call) -> bool:
        project = self.facts.project
        if project is None or not project.cpu_saving_bases:
            return False
        scope = self.parent(call)
        while scope is not None and not isinstance(scope, cst.FunctionDef):
            scope = self.parent(scope)
        cls = self.facts.calls.class_of.get(scope) if scope is not None else None
        if cls is None:
            return False
        names = self.facts.names
        bases = project.cpu_saving_bases
        if any(names.qualified_name(base.value) in bases for base in cls.bases):
            return True
        # ``from .base_model import BaseModel``: the summary spells it ``.base_model.BaseModel``.
        relative = relative_bindings(self.facts.module)
        return any(_spelled(base.value, relative) in bases for base in cls.bases)

    def _reads_cpu_checkpoint(self, load: cst.Call) -> bool:
        """The file names in ``load``'s path (string literals in it, or in
        any value a name of it is bound to in the same function) are all
        ones the project writes only from CPU state (``net.cpu()`` before
        ``torch.save(net.state_dict(), osp.join(d, "model_final.pth"))`` in
        train.py): project/checkpoint_files.py."""
        project = self.facts.project
        if project is None or not project.cpu_saved_files or not load.args:
            return False
        path = load.args[0].value
        names = _Strings()
        visit_fast(path, names)
        if names.names:
            scope = self.parent(load)
            while scope is not None and not isinstance(scope, (cst.FunctionDef, cst.Module)):
                scope = self.parent(scope)
            if scope is not None:
                bound = _Bound(names.names)
                visit_fast(scope, bound)
                names.files |= bound.files
        return bool(names.files) and names.files <= set(project.cpu_saved_files)

    def _outer(self, expr: cst.BaseExpression) -> tuple[cst.BaseExpression, cst.CSTNode | None]:
        """``expr`` with the subscripts applied to it (``torch.load(p)["model"]``
        is the same load, indexed), and the node holding that."""
        parent = self.parent(expr)
        while True:
            if isinstance(parent, cst.Subscript) and parent.value is expr:
                expr, parent = parent, self.parent(parent)
                continue
            # ``torch.load(p).get("model")``: the same load, a key looked up.
            call = self.parent(parent) if isinstance(parent, cst.Attribute) and parent.value is expr else None
            if isinstance(call, cst.Call) and call.func is parent and is_get(call):
                expr, parent = call, self.parent(call)
                continue
            return expr, parent

    def _converts(self, arg: cst.Arg) -> bool:
        """``arg`` is the one positional argument of a plain function call
        (``convert_state_dict(sd)``, ``OrderedDict(sd)``), not of a method."""
        call = self.parent(arg)
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name)):
            return False
        return len(call.args) == 1 and arg is call.args[0] and arg.keyword is None and not arg.star

    def _is_load(self, node: cst.Call) -> bool:
        return self.facts.names.call_name(node) == "torch.load"

    def _is_load_without_map_location(self, node: cst.Call) -> bool:
        given = _map_location(node)
        if given is not None and not none_on_gpu(given, node, self.facts):
            return False  # a ``map_location`` that is ``None`` on the CUDA path maps nothing there
        if has_star_args(node) or (has_star_kwargs(node) and not splat_misses(node, "map_location", self.facts)):
            return False  # map_location may be among them
        return self.facts.names.call_name(node) == "torch.load"

    valid = [
        Valid(
            """\
import json
import sys

import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, 1)


if __name__ == "__main__":
    options = json.loads(sys.argv[1])
    head = Head(**options)
    head = nn.DataParallel(head)
    state = torch.load(sys.argv[2])
    head.load_state_dict(state["weights"])
    head = head.module.cuda()
""",
            "built with no device, loaded, then moved in the block of `if __name__ == '__main__':`:"
            " on the CPU at the load",
        ),
        Valid(
            """\
import torch
from nets import build_net

use_cuda = False
device = torch.device("cuda" if use_cuda else "cpu")


def test_restore(path):
    model = build_net().to(device)
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["state_dict"])
""",
            "the module's switch is a literal False: device is the CPU, and .to(device) leaves the model there"
            " (wavenet_vocoder's tests)",
        ),
        Valid(
            """\
import torch
import torch.nn as nn


def resume(path):
    model = nn.DataParallel(nn.Linear(4, 2)).cuda()
    map_location = "cpu" if torch.cuda.is_available() else None
    model.load_state_dict(torch.load(path, map_location=map_location))
""",
            "map_location is the CPU whenever CUDA is on: None only on a machine without a GPU",
        ),
        Valid(
            """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)


def evaluate(weights):
    for path in weights:
        net = Net()
        checkpoint = torch.load(path)
        net.load_state_dict(checkpoint["state_dict"])
        net = nn.DataParallel(net.cuda())
""",
            "the model is rebuilt on the CPU at the top of each iteration: the move at the end of the body"
            " reaches only the model the next iteration replaces (TDN's test scripts)",
        ),
        Valid(
            """\
import math
import torch
import torch.nn as nn
class PSP(nn.Module):
    def __init__(self, opts):
        super(PSP, self).__init__()
        self._set_opts(opts)
        self.opts.n_styles = int(math.log(self.opts.size, 2)) * 2 - 2
        self.encoder = self._set_encoder()
        self._load_weights()
    def _set_opts(self, opts):
        self.opts = opts
    def _set_encoder(self):
        if self.opts.kind != "linear":
            raise ValueError("{} is not an encoder".format(self.opts.kind))
        return nn.Linear(8, 8)
    def _load_weights(self):
        ckpt = torch.load(self.opts.weights)
        self.encoder.load_state_dict(ckpt["encoder"])
        self._load_latent_avg(ckpt)
    def _load_latent_avg(self, ckpt):
        self.latent_avg = ckpt["latent_avg"].to(self.opts.device)
""",
            "a load in a method `__init__` calls before anything moves `self`: the instance is on no device"
            " yet, whatever the class moves later (pixel2style2pixel's `pSp`)",
        ),
        Valid(
            """\
import os
import torch
def save(model, field, log_dir, iteration):
    state = {k: v.cpu() for k, v in model.state_dict().items()}
    torch.save({"model_state_dict": state, "field": field}, os.path.join(log_dir, f"iteration_{iteration}.pth"))
def resume(model, path):
    model.cuda()
    save_dict = torch.load(path)
    model.load_state_dict(save_dict["model_state_dict"])
""",
            "the file's only model checkpoint is a dict literal whose state is moved to the CPU entry by entry, "
            "beside a plain value: it holds CPU tensors",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, path):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.fc.load_state_dict(torch.load(path))
        self.cuda()
""",
            "a load in `__init__` before the class moves itself: it lands on a CPU model",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class ValueLayer(nn.Module):
    def __init__(self, sizes, path):
        nn.Module.__init__(self)
        self.mlp = nn.ModuleList()
        for a, b in zip(sizes[:-1], sizes[1:]):
            self.mlp.append(nn.Linear(a, b))
        self.load_state_dict(torch.load(path))
""",
            "`nn.Module.__init__(self)`, the old spelling of `super().__init__()`, moves nothing: the load in"
            " `__init__` lands on a CPU model (rpg_event_representation_learning's `ValueLayer`)",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Head(nn.Module):
    def __init__(self, path, act=nn.LeakyReLU(negative_slope=0.1)):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.act = act
        self.load_state_dict(torch.load(path))
def to_gpu(net):
    return net.cuda()
""",
            "a layer slot whose default owns no tensor (an activation) set on the model under construction"
            " moves none of it: the load in `__init__` lands on a CPU model",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 2)
def get_model(checkpoint):
    model = Net(checkpoint["n"])
    model.load_state_dict(checkpoint["state"])
    model.cuda()
    return model
def main(paths):
    for path in paths:
        checkpoint = torch.load(path)
        model = get_model(checkpoint)
""",
            "the checkpoint handed to a helper that loads it into a model it built on the CPU, then moves it",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 2)
    def initialize_with(self, path):
        srresnet = torch.load(path)["model"]
        self.net.load_state_dict(srresnet.state_dict())
""",
            "a pickled module's state dict loaded into a part of a model not moved anywhere before: it may be on the CPU",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
from pytorch_pretrained_bert import BertForMaskedLM
from pytorch_pretrained_bert.modeling import BertOnlyMLMHead
def load_fine_tuned(bert_model, size, path):
    model = BertForMaskedLM.from_pretrained(bert_model)
    model.bert.embeddings.word_embeddings = nn.Embedding(size, model.bert.embeddings.word_embeddings.weight.shape[1])
    model.cls = BertOnlyMLMHead(model.config, model.bert.embeddings.word_embeddings.weight)
    model.load_state_dict(torch.load(path))
    return model
""",
            "a part rebuilt by a class from the model's own parts (no device) stays on the CPU with them",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
def resume(path):
    model = nn.Linear(4, 2).cuda()
    checkpoint = torch.load(path, map_location="cpu")
    model.load_state_dict(checkpoint["model"].state_dict())
""",
            "the pickled module is restored on the CPU",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
def resume(path):
    model = nn.Linear(4, 2)
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["model"].state_dict())
    model.cuda()
""",
            "the model is still on the CPU at the load",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
from pytorch_pretrained_bert import BertForMaskedLM
class Vocab(object):
    def __init__(self, words):
        self.size = len(words) + 3
def load_fine_tuned(bert_model, words, path):
    vocab = Vocab(words)
    model = BertForMaskedLM.from_pretrained(bert_model)
    model.vocab = vocab
    model.config.vocab_size = vocab.size
    model.load_state_dict(torch.load(path))
    return model
""",
            "from_pretrained of a name handed in builds on the CPU; a plain object set on the model moves nothing",
        ),
        Valid(
            """\
import torch
from transformers import AutoConfig, AutoModelForSequenceClassification
def load_lora(args):
    config = AutoConfig.from_pretrained(args.name, num_labels=3)
    model = AutoModelForSequenceClassification.from_pretrained(args.name, config=config)
    model.load_state_dict(torch.load(args.lora_path), strict=False)
    return model
""",
            "from_pretrained's config= is the settings it builds from, never a model: the model is on the CPU",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Encoder(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lstm = nn.LSTM(dim, dim)
    def get_batch(self, rows):
        return torch.FloatTensor(rows)
    def encode(self, rows):
        batch = self.get_batch(rows)
        batch = batch.cuda()
        return self.lstm(batch)[0].data.cpu().numpy()
def main(path):
    model = Encoder(300)
    model.load_state_dict(torch.load(path))
    model = model.cuda()
""",
            "the class moves only tensors its own method returns fresh: the model is on the CPU at the load",
        ),
        Valid(
            """\
import torch
def main(config, module_arch, device):
    model = config.init_obj("arch", module_arch)
    checkpoint = torch.load(config.resume)
    state_dict = checkpoint["state_dict"]
    model.load_state_dict(state_dict)
    model = model.to(device)
def tune(net, path):
    sd = torch.load(path)
    net.load_state_dict({k[7:]: v for k, v in sd.items()})
""",
            "a load drawn on its way (a name bound to its key, a comprehension) into a model not known to be "
            "moved before it (built by a config, a parameter): the copy on a GPU may be the only one",
        ),
        Valid(
            """\
import torch
def tune(model, path, device):
    model[0].to(device)
    sd = torch.load(path)
    sd = {k: v for k, v in sd.items() if "fc" not in k}
    model.load_state_dict(sd)
""",
            "only a part of the model is moved (`model[0]`): the model it is loaded into is not known to be on a "
            "device (a table's items count only for a load into an item)",
        ),
        Valid(
            """\
import torch
import torchvision
def tune(path):
    model = torchvision.models.resnet18()
    sd = torch.load(path).get("state_dict")
    sd = {k[7:]: v for k, v in sd.items()}
    model_dict = model.state_dict()
    model_dict.update(sd)
    model.load_state_dict(model_dict)
    return model.cuda()
""",
            "the checkpoint's key, filtered copy and merge reach a model still on the CPU (a torchvision "
            "constructor builds it there): it is moved only after the load",
        ),
        Valid(
            """\
import torch
def test(model, path):
    model = model.cuda()
    checkpoint = torch.load(path)
    d = dict()
    for key, value in checkpoint["state_dict"].items():
        d[key[7:]] = value.cpu()
    model.load_state_dict(d)
def tune(model, path):
    checkpoint = torch.load(path)
    d = {}
    for key, value in checkpoint.items():
        d[key[7:]] = value
    model.load_state_dict(d)
    model.cuda()
""",
            "a loop storing a transformed value (`value.cpu()`) is not followed; a loop copy into a model not "
            "known to be moved before the load (a parameter) may be the only copy on a GPU",
        ),
        Valid(
            """\
import torch
def tune(model, path):
    model.cuda()
    sd = torch.load(path)
    sd = {k: v.half() for k, v in sd.items()}
    model_dict = model.state_dict()
    model_dict.update(torch.load(path, map_location="cpu"))
    model_dict.update(sd)
    model.load_state_dict(model_dict)
""",
            "a comprehension that transforms each value is not followed (what it does to the device is not "
            "known); the merged load names map_location",
        ),
        Valid(
            """\
import os

import torch


class CheckpointIO(object):
    def __init__(self, checkpoint_dir="./chkpts", **kwargs):
        self.module_dict = kwargs
        self.checkpoint_dir = checkpoint_dir

    def save(self, filename, **kwargs):
        outdict = kwargs
        for k, v in self.module_dict.items():
            outdict[k] = v.state_dict()
        torch.save(outdict, os.path.join(self.checkpoint_dir, filename))

    def load_file(self, filename):
        state_dict = torch.load(filename)
        scalars = self.parse_state_dict(state_dict)
        return scalars

    def parse_state_dict(self, state_dict):
        for k, v in self.module_dict.items():
            if k in state_dict:
                print(k, v, state_dict[k].shape)
        return {k: v for k, v in state_dict.items() if k not in self.module_dict}
""",
            "the method the loaded state dict is handed to only reads it: nothing reaches load_state_dict",
        ),
        Valid(
            """\
import torch


def train(net, loader, optim, save_pth):
    net.cuda()
    for x, y in loader:
        loss = net(x).sum()
        optim.zero_grad()
        loss.backward()
        optim.step()
    net.cpu()
    state = net.module.state_dict() if hasattr(net, "module") else net.state_dict()
    torch.save(state, save_pth)


def evaluate(net, save_pth):
    net.cuda()
    net.load_state_dict(torch.load(save_pth))
""",
            "the module saves its checkpoint after a bare `net.cpu()`, whichever branch of the conditional state dict runs: CPU tensors",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class PoseNet(nn.Module):
    def __init__(self, cfg, **kwargs):
        super().__init__()
        self.head = nn.Conv2d(cfg.channels, cfg.joints, 1)
def get_pose_net(cfg, **kwargs):
    model = PoseNet(cfg, **kwargs)
    return model
def main(cfg):
    model = get_pose_net(cfg)
    model.load_state_dict(torch.load(cfg.model_file))
    model = torch.nn.DataParallel(model).cuda()
""",
            "a builder of a class whose `__init__` takes `**kwargs` and never reads them: no `device=` reaches a layer, the model is on the CPU at the load",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)
    def forward(self, x):
        return self.fc(x)
model = Classifier()
print(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
torch.save(model.state_dict(), "best.pt")
model.load_state_dict(torch.load("best.pt"))
""",
            "a script that never moves its model off the CPU (printing it does not move it)",
        ),
        Valid(
            """\
import torch
import torchvision
def export(path):
    model = torchvision.models.resnet50()
    model.eval()
    model.load_state_dict(torch.load(path))
    return model
def build(path, device):
    net = torchvision.models.resnet18(num_classes=10).eval()
    state = torch.load(path)
    net.load_state_dict(state)
    return net.to(device)
""",
            "the model is still on the CPU where the checkpoint is loaded into it (a torchvision constructor builds it there)",
        ),
        Valid(
            """\
import torch
import torchvision.models as models
def main(args):
    if args.pretrained:
        model = models.__dict__[args.arch](pretrained=True)
    else:
        model = models.__dict__[args.arch]()
    if args.resume:
        model.load_state_dict(torch.load(args.resume))
    return torch.nn.DataParallel(model).cuda()
""",
            "an entry of torchvision.models' namespace is a torchvision constructor: the model is on the CPU at the load",
        ),
        Valid(
            """\
import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import FullStateDictConfig, StateDictType
def save(model, path):
    cfg = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, cfg):
        state = model.state_dict()
    torch.save(state, path)
def load(model, path):
    model.load_state_dict(torch.load(path))
""",
            "FSDP gathers the full state dict into CPU memory before it is saved",
        ),
        Valid(
            """\
import torch
def save(model, path):
    model.eval().cpu()
    torch.save(model.state_dict(), path)
def save_ema(ema, path):
    weights = {k: v.cpu() for k, v in ema.state_dict().items()}
    torch.save(weights, path)
def load(model, path):
    model.load_state_dict(torch.load(path))
""",
            "moved to the CPU in one chained statement, or copied to the CPU, before every save",
        ),
        Valid(
            """\
import numpy as np
import torch
from utils import summarize
stats = summarize(torch.load("stats.pt"))
weights = np.asarray(torch.load("w.pt"))
model.load_state_dict(init_state)
model.load_state_dict(merge(torch.load("a.pt"), torch.load("b.pt", map_location="cpu"), strict=True))
""",
            "a helper's result that does not feed load_state_dict; a helper taking more than the checkpoint",
        ),
        Valid(
            """\
import os
import torch
def save_network(network, epoch):
    torch.save(network.cpu().state_dict(), os.path.join(ckpt_dir, "net_%s.pth" % epoch))
    network.cuda()
def save_model(model, gpu):
    if gpu is not None:
        model.cpu()
    torch.save(model.state_dict(), "last.pth")
    if gpu is not None:
        model.cuda()
def save_weights(model):
    torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, "w.pth")
def load_network(network, path):
    network.load_state_dict(torch.load(path))
    return network
""",
            "the file writes its checkpoints from CPU tensors only: loading them back makes no GPU copy",
        ),
        Valid(
            """\
import torch
def resume(path):
    stopper = EarlyStopping(patience=10)
    stopper.load_state_dict(torch.load(path, weights_only=True))
    return stopper
""",
            "early-stopping bookkeeping holds numbers, not weights",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
def run(cfg, model):
    state = torch.load(cfg["class_weights"], weights_only=True)
    criterion = nn.CrossEntropyLoss(weight=state.cuda())
    if cfg.get("resume"):
        state = torch.load(cfg["resume"], map_location="cpu")
        model.load_state_dict(state["model"])
    return criterion
""",
            "the name is reused: only the load with map_location reaches load_state_dict",
        ),
        Valid(
            """\
import torch
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10)
scheduler.load_state_dict(torch.load(path + "/scheduler.pt"))
self.lr_scheduler.load_state_dict(torch.load(os.path.join(ckpt, "scheduler.pt"), weights_only=True))
self.accelerator.scaler.load_state_dict(torch.load(os.path.join(ckpt, "scaler.pt")))
sampler.load_state_dict(torch.load(path + ".sampler"))
train_loader.load_state_dict(torch.load(path + ".loader"))
""",
            "schedulers, scalers, samplers and loaders hold no weights",
        ),
        Valid(
            """\
import torch
model.load_state_dict(torch.load("best.pt", "cpu"))
state = torch.load(path, map_location=device)
model.load_state_dict(state)
""",
            "map_location given positionally or by keyword",
        ),
        Valid(
            """\
import torch
features = torch.load("cache/features.pt")
loader = DataLoader(TensorDataset(features, labels), batch_size=64)
model.load_state_dict(init_weights)
""",
            "the result does not feed load_state_dict",
        ),
        Valid(
            """\
import torch
scripted = torch.jit.load("model.pt")
model.load_state_dict(scripted.state_dict())
""",
            "torch.jit.load is another function",
        ),
        Valid(
            """\
import numpy as np
import pickle
from safetensors.torch import load_file
model.load_state_dict(load_file("model.safetensors"))
weights = np.load("w.npy")
state = pickle.load(fh)
model.load_state_dict(state)
""",
            "other libraries' load",
        ),
        Valid(
            """\
import torch
with torch.device("meta"):
    model = Net()
model.load_state_dict(torch.load("best.pt", weights_only=True), assign=True)
""",
            "assign=True: the loaded tensors become the parameters",
        ),
        Valid(
            """\
import torch
def load(path):
    state = torch.load(path)
    return state
def restore(model, state):
    model.load_state_dict(state)
""",
            "the name is bound in another function",
        ),
        Valid(
            """\
import torch
def load(path, **kwargs):
    model.load_state_dict(torch.load(path, **kwargs))
""",
            "map_location may be in **kwargs",
        ),
        Valid(
            """\
import json
import torch
import torch.nn as nn
class Options(dict):
    pass
class Tagger(nn.Module):
    def __init__(self, num_tags, opts):
        super().__init__()
        self.fc = nn.Linear(opts["dim"], num_tags)
def predict(tags, path, device):
    num_tags = len(tags)
    opts = Options(json.load(open("opts.json")))
    model = Tagger(num_tags=num_tags, opts=opts)
    model.load_state_dict(torch.load(path))
    return model.to(device)
def restore(path):
    ckpt = torch.load(path)
    model = Tagger(ckpt["num_tags"], ckpt["opts"])
    model.load_state_dict(ckpt["state_dict"])
    return model
""",
            "the constructor's arguments are numbers, options or parts of the checkpoint, not a model it wraps:"
            " the model is still on the CPU",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Small(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.fc = nn.Linear(8, classes)
class Large(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.fc = nn.Linear(64, classes)
ARCHS = {"small": Small, "large": Large}
def init_weights(m):
    nn.init.zeros_(m.weight) if isinstance(m, nn.Linear) else None
def load(name, path):
    model = ARCHS[name](10)
    model.apply(init_weights)
    model.load_state_dict(torch.load(path))
    return model.cuda()
""",
            "a class picked from a table of classes that move nothing, initialised with `apply`:"
            " still on the CPU at the load",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Tiny(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.fc = nn.Linear(8, classes)
def tiny(pretrained=False, **kwargs):
    model = Tiny(**kwargs)
    if pretrained:
        model.load_state_dict(torch.load("tiny.pth"))
    return model
def tiny_v2(path, classes=10):
    model = _build(classes)
    _load_pretrained(model, path)
    return model
def _build(classes):
    return Tiny(classes)
def _load_pretrained(model, path):
    state = torch.load(path)
    model.load_state_dict(state, strict=False)
""",
            "`**kwargs` into a class whose `__init__` takes no device; a builder function that returns a model built"
            " on the CPU; a private helper whose every caller passes one",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class F(nn.Module):
    def __init__(self, depth=28):
        super().__init__()
        self.fc = nn.Linear(depth, 1)
class CCF(F):
    def __init__(self, depth=28):
        super().__init__(depth)
def main(args, device):
    model_cls = F if args.uncond else CCF
    f = model_cls(args.depth)
    ckpt_dict = torch.load(args.load_path)
    f.load_state_dict(ckpt_dict["model_state_dict"])
    f = f.to(device)
    return f
""",
            "a name bound to a choice between classes that build on the CPU (JEM's `model_cls = F if args.uncond"
            " else CCF`): the model is built on the CPU, loaded, then moved",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class VQVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
class PixelSNAIL(nn.Module):
    def __init__(self, channel):
        super().__init__()
        self.fc = nn.Linear(channel, 4)
def _load_model(model, checkpoint, device):
    ckpt = torch.load(checkpoint)
    if model == "vqvae":
        model = VQVAE()
    elif model == "pixelsnail":
        model = PixelSNAIL(ckpt["channel"])
    model.load_state_dict(ckpt["model"])
    model = model.to(device)
    return model
if __name__ == "__main__":
    vqvae = _load_model("vqvae", "vqvae.pt", "cuda")
    top = _load_model("pixelsnail", "top.pt", "cuda")
""",
            "a parameter every caller hands a string (vq-vae-2's `load_model('vqvae', ...)`), rebuilt on the CPU"
            " in every arm of an `if`/`elif` without `else`: the path that keeps the string loads into no model",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Small(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.fc = nn.Linear(8, classes)
def main(name, path, device):
    archs = {"small": Small}
    def build(classes):
        return Small(classes)
    model = archs[name](10)
    model.load_state_dict(torch.load(path))
    other = build(10)
    other.load_state_dict(torch.load(path))
    return model.to(device), other.to(device)
""",
            "a table of classes and a builder bound once inside the function that uses them: still read",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class DLA(nn.Module):
    def __init__(self, levels, pretrained=None):
        super().__init__()
        self.levels = self._make_levels(levels)
        if pretrained:
            self.load_state_dict(torch.load(pretrained))
    def _make_levels(self, levels):
        return nn.Sequential(*[nn.Linear(8, 8) for _ in range(levels)])
    def _load_pretrained_model(self, path):
        weights = torch.load(path)
        self.fc = nn.Linear(8, len(weights["fc.bias"]))
        self.load_state_dict(weights)
def dla34(pretrained=False, **kwargs):
    model = DLA(4, **kwargs)
    if pretrained:
        model._load_pretrained_model("dla34.pth")
    return model
""",
            "a load into `self` while `__init__` builds it, or in a method whose every call is on a model just"
            " built on the CPU: by construction nothing is on a GPU yet",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
from torch.autograd import Variable
use_cuda = torch.cuda.is_available()
class Encoder(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.hidden = hidden
        self.gru = nn.GRU(hidden, hidden)
    def init_hidden(self):
        result = Variable(torch.zeros(1, 1, self.hidden))
        if use_cuda:
            return result.cuda()
        return result
    def forward(self, x, h):
        noise = torch.randn(x.shape).to(x.device)
        return self.gru(x + noise, h)
encoder = Encoder(256)
encoder.load_state_dict(torch.load("encoder.pth"))
if use_cuda:
    encoder = encoder.cuda()
""",
            "a class whose methods move only tensors they build themselves (a fresh hidden state, noise):"
            " `Tensor.cuda()` returns a copy, the module stays on the CPU until `encoder.cuda()`",
        ),
        Valid(
            """\
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable
class STN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 9)
    def forward(self, x):
        iden = Variable(torch.from_numpy(np.eye(3).flatten())).view(1, 9).repeat(x.size(0), 1)
        if x.is_cuda:
            iden = iden.cuda()
        return self.fc(x) + iden
net = STN()
net.load_state_dict(torch.load("stn.pth"))
net.cuda()
""",
            "a local rebound to its own move (`iden = iden.cuda()`, pointnet's STN3d) is a copy of a tensor the"
            " method built: the class moves nothing of its own, the model is on the CPU at the load",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Trainer:
    def __init__(self, path):
        self.path = path
        self.setup()
    def setup(self):
        self._model = nn.Linear(4, 2)
    def fit(self, batches):
        self._model.train()
        for x in batches:
            self._model(x).sum().backward()
    def load(self):
        self._model.load_state_dict(torch.load(self.path))
""",
            "an attribute of a plain class built on the CPU in one method, loaded into in another, and in every"
            " method only called or switched (never moved, handed over or aliased; a public one: no other module"
            " moves it either): on the CPU at the load",
        ),
        Valid(
            """\
import timm
import torch
from torchvision import models
from torchvision.models import alexnet
def train(net, loader):
    net.to("cuda")
if __name__ == "__main__":
    net = alexnet(True)
    if args.train:
        train(net, loader)
    elif args.prune:
        net.load_state_dict(torch.load(args.trained_model))
    else:
        backbone = models.resnet50(pretrained=True)
        backbone.load_state_dict(torch.load(args.backbone))
        head = timm.create_model("resnet18", pretrained=False)
        head.load_state_dict(torch.load(args.head))
""",
            "torchvision and timm constructors build on the CPU; the model handed to `train` in one branch is"
            " still on the CPU in the branches that exclude it",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
from configs.ddpm import cifar10 as configs
from options import make_parser
class DDPM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.fc = nn.Linear(config.dim, 2)
config = configs.get_config()
parser = make_parser()
args = parser.parse_args()
checkpoint = torch.load("ddpm.pth")
model = DDPM(config)
model.load_state_dict(checkpoint)
other = DDPM(args)
other.load_state_dict(torch.load(args.ckpt))
""",
            "a model built from settings (`get_config()`, `parse_args()`), not wrapping another model: on the CPU",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
from torch.optim import swa_utils
class Small(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 2)
class Parts(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 6)
def _load_network(network, path, average):
    try:
        network.load_state_dict(torch.load(path))
    except RuntimeError:
        if average:
            network = swa_utils.AveragedModel(network)
        network.load_state_dict(torch.load(path))
    return network
if opt.small:
    structure = Small(opt.n)
else:
    structure = Parts(opt.n)
if opt.parts:
    structure = Parts(opt.n)
model = _load_network(structure, opt.path, opt.average).cuda()
""",
            "every call passes a model still on the CPU: built in each arm of an `if`/`else`, then rebuilt on "
            "the CPU by a later `if` without `else`; `AveragedModel(network)` without a device copies it where it is",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
from torch.autograd import Variable
class Trainer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gen = nn.Linear(dim, dim)
        self.noise = torch.randn(8, dim).cuda()
    def update(self, x):
        z = Variable(torch.randn(x.size(0), 4).cuda())
        self.loss = (self.gen(x) - z).abs().mean()
        return self.loss
def load_inception(path):
    state_dict = torch.load(path)
    model = inception_v3(pretrained=False)
    model.aux_logits = False
    model.load_state_dict(state_dict)
    return model
trainer = Trainer(16)
trainer.gen.load_state_dict(torch.load("gen.pt"))
trainer.cuda()
""",
            "a fresh tensor moved into a plain attribute (`self.noise = torch.randn(...).cuda()`, in no state "
            "dict) or into a local does not move the module; `inception_v3` is bound nowhere in the module "
            "(never imported): what it builds is not known, so nothing is claimed",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
def count_params(net):
    return sum(p.numel() for p in net.parameters())
def report(net):
    print(count_params(net))
def run(path):
    model = nn.DataParallel(nn.Linear(4, 2))
    report(model)
    model.load_state_dict(torch.load(path))
    model.cuda()
""",
            "the fresh model is handed to a function of this module that only reads it (directly or through "
            "another that moves nothing): it is still on the CPU at the load",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def __init__(self, mode, path):
        super().__init__()
        if mode == "small":
            self.net = nn.Linear(3, 1)
        elif mode == "wide":
            self.net = nn.Linear(3, 8)
        self.net.load_state_dict(torch.load(path))
        self.net.cuda()
""",
            "in the `__init__` of a plain `nn.Module` subclass, an attribute built on the CPU in every arm of an "
            "`if`/`elif` was set by nothing before: it is on the CPU at the load, moved only after it",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
def read_checkpoint(path):
    state = torch.load(path)
    return state
def resume(path):
    model = nn.Linear(4, 2)
    model.load_state_dict(read_checkpoint(path)["model"])
    model.cuda()
""",
            "the helper's load is returned to a caller that loads it into a model still on the CPU",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 4)
        self._device = "cuda"
        self._targets = {}
    def _label(self, labels):
        labels = torch.from_numpy(labels).float().to(self._device)
        self._targets["labels"] = labels
        return labels
    def forward(self, x, boxes=None):
        torch.backends.cudnn.benchmark = False
        self._boxes = torch.from_numpy(boxes).to(self._device) if boxes is not None else None
        self._label(x)
        return self.head(x)
net = Detector()
net.load_state_dict(torch.load("detector.pth"))
net.cuda()
""",
            "faster-rcnn's `Network`: fresh tensors moved into a plain dict of the instance, or into an attribute "
            "through a conditional, and a store into `torch.backends`, keep nothing in its state: the class "
            "moves nothing, and the net is on the CPU at the load",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
def bn_params(model, name):
    for m in model.modules():
        if isinstance(m, nn.BatchNorm1d):
            yield getattr(m, name)
def train(path):
    net = nn.Sequential(nn.Linear(4, 2), nn.BatchNorm1d(2))
    optimizer = torch.optim.Adam(
        [{"params": bn_params(net, "weight")}, {"params": bn_params(net, "bias"), "lr": 1e-2}], lr=1e-3
    )
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[10])
    checkpoint = torch.load(path)
    net.load_state_dict(checkpoint["state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    net = nn.DataParallel(net).cuda()
""",
            "lightweight-pose's resume: an optimizer over parameter groups drawn from a model still on the CPU "
            "(its scheduler moves nothing) casts the state it loads to its parameters' device, the CPU; the "
            "model moves after both loads",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
def make_optimizer(cfg, model):
    return getattr(torch.optim, cfg.name)(model.parameters(), lr=cfg.lr)
def train(cfg, path):
    model = nn.Linear(4, 2)
    optimizer = make_optimizer(cfg, model)
    optimizer.load_state_dict(torch.load(path))
    model.cuda()
""",
            "reid-strong-baseline's resume: the optimizer a helper that moves nothing builds over a model "
            "still on the CPU holds no state until it steps, and casts the state it loads to the CPU",
        ),
        Valid(
            """\
import importlib
import torch
def run(args):
    model = getattr(importlib.import_module(args.cam_network), "CAM")()
    model.load_state_dict(torch.load(args.cam_weights_name + ".pth"), strict=True)
    model.eval()
    model.cuda()
""",
            "CCT's make_cam: a class picked by name from a module named at run time, built without a device: "
            "what it builds is not known, so the load into it is not claimed",
        ),
        Valid(
            """\
import torch
def train(args, device):
    Model = eval(args.model_type)
    model = Model(args.classes)
    if args.pretrained:
        model.load_state_dict(torch.load(args.pretrained)["model"])
    model = torch.nn.DataParallel(model)
    model.to(device)
""",
            "audioset's finetune_template: a class picked by a name read at run time (`eval(model_type)`), "
            "built without a device: what it builds is not known, so the load into it is not claimed; "
            "DataParallel and the move come after it",
        ),
        Valid(
            """\
import torch
import torch.nn as nn


class Small(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 2)


class Wide(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 8)


MODELS = [Small]
MODELS.append(Wide)


def load_model(name):
    mdict = {m.__name__: m for m in MODELS}
    if name not in mdict:
        return None
    return mdict[name]


def main(name, path, device):
    Model = load_model(name)
    model = Model(4)
    model.load_state_dict(torch.load(path))
    model.to(device)
""",
            "a factory returning one class of a module-level registry (FCGF's load_model over MODELS): every "
            "candidate moves nothing, so the model it picks is built on the CPU and moved after the load",
        ),
        Valid(
            """\
import torch
def save_network(network, path):
    state_dict = network.state_dict()
    for key, param in state_dict.items():
        state_dict[key] = param.cpu()
    torch.save(state_dict, path)
def save_optimizer(optimizer, path):
    torch.save(optimizer.state_dict(), path)
def load_network(network, path):
    network.load_state_dict(torch.load(path))
""",
        ),
        Valid(
            """\
import torch
class Base:
    def save_network(self, network, path):
        state_dict = network.state_dict()
        for key, param in state_dict.items():
            state_dict[key] = param.detach().cpu()
        torch.save(state_dict, path)
    def save(self, path):
        torch.save({"optimizer": self.optimizer.state_dict(), "epoch": self.epoch}, path)
    def load_network(self, path, network):
        state_dict = torch.load(path)
        network.load_state_dict(state_dict)
""",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
use_cuda = torch.cuda.is_available()
def _load(path):
    if use_cuda:
        checkpoint = torch.load(path)
    else:
        checkpoint = torch.load(path, map_location=lambda storage, loc: storage)
    return checkpoint
def load_checkpoint(path, model):
    checkpoint = _load(path)
    s = checkpoint["state_dict"]
    new_s = {}
    for k, v in s.items():
        new_s[k.replace("module.", "")] = v
    model.load_state_dict(new_s)
model = nn.Linear(4, 2)
load_checkpoint("a.pth", model)
model.cuda()
""",
            "the helper's only caller hands it a model still on the CPU",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
def _load(path):
    if torch.cuda.is_available():
        checkpoint = torch.load(path, map_location="cuda:0")
    else:
        checkpoint = torch.load(path, map_location="cpu")
    return checkpoint
def load_checkpoint(path, model):
    s = {k[7:]: v for k, v in _load(path)["state_dict"].items()}
    model.load_state_dict(s)
model = nn.Linear(4, 2).cuda()
load_checkpoint("a.pth", model)
""",
            "map_location is passed on every branch of the helper",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
def _load(path):
    if torch.cuda.is_available():
        checkpoint = torch.load(path)
    else:
        checkpoint = torch.load(path, map_location="cpu")
    return checkpoint
def show(path):
    checkpoint = _load(path)
    print(checkpoint["global_step"], checkpoint["state_dict"].keys())
""",
            "the helper's result never reaches load_state_dict",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
def _restore(path, model):
    ck = torch.load(path)
    model.load_state_dict({k[7:]: v for k, v in ck["state_dict"].items()})
a = nn.Linear(4, 2).cuda()
_restore("a.pth", a)
b = nn.Linear(4, 2)
_restore("b.pth", b)
""",
            "one caller of the helper hands it a model still on the CPU: not every caller's model is on a device",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
def _restore(path, model):
    ck = torch.load(path)
    model = nn.Linear(4, 2)
    model.load_state_dict({k[7:]: v for k, v in ck["state_dict"].items()})
    return model
net = _restore("a.pth", nn.Linear(4, 2).cuda())
""",
            "the parameter is rebound to a model built on the CPU before the load",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
def main(path):
    checkpoint = torch.load(path)
    model = nn.Linear(4, 2)
    saved = checkpoint["model_g"]
    new_state_dict = {}
    for k, v in saved.items():
        try:
            new_state_dict[k] = saved["module." + k]
        except KeyError:
            new_state_dict[k] = v
    model.load_state_dict(new_state_dict)
    model.cuda()
""",
            "the renaming loop copies the checkpoint's tensors into a model still on the CPU",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
def main(path):
    checkpoint = torch.load(path)
    model = nn.Linear(4, 2).cuda()
    saved = checkpoint["model_g"]
    new_state_dict = {}
    for k, v in saved.items():
        try:
            new_state_dict[k] = saved["module." + k].cpu()
        except KeyError:
            new_state_dict[k] = v.cpu()
    model.load_state_dict(new_state_dict)
""",
            "every value the loop stores is moved to the CPU first: not the loaded tensors",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
def main(path, defaults):
    checkpoint = torch.load(path)
    model = nn.Linear(4, 2).cuda()
    new_state_dict = {}
    for k, v in checkpoint["model_g"].items():
        try:
            new_state_dict[k] = defaults[k]
        except KeyError:
            new_state_dict[k] = defaults["module." + k]
    model.load_state_dict(new_state_dict)
""",
            "the loop stores entries of another dict, not of the loaded checkpoint",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
class Evaluator(object):
    def __init__(self, model):
        self.model = model
    def evaluate(self, loader):
        return [self.model(x) for x in loader]
def train(path, loader, device):
    model = Net()
    evaluator = Evaluator(model=model)
    model.load_state_dict(torch.load(path)["model"])
    model.to(device)
    evaluator.evaluate(loader)
""",
            "a plain class whose code moves nothing holds the model where it is: still on the CPU at the load",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.width = 8
        self.fc = nn.Linear(4, 8)
class Decoder(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, 2)
def evaluate(path):
    encoder = Encoder()
    decoder = Decoder(encoder.width)
    encoder.load_state_dict(torch.load(path))
    encoder.cuda()
    decoder.cuda()
""",
            "a model class whose code moves nothing holds what it is handed where it is: the encoder is"
            " still on the CPU at the load (manydepth's `PoseDecoder(pose_enc.num_ch_enc)`)",
        ),
        Valid(
            """\
import torch
import networks
def load_model(path):
    checkpoint = torch.load(path)
    model = models.__dict__[checkpoint["arch"]](out=3)
    model.load_state_dict(checkpoint["state_dict"])
    return model
""",
            "a model built fresh from a module the file never imports: what it builds is not known, nothing is claimed",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 2)
def generate_model(opt):
    if opt.model == "small":
        model = Net(2)
    elif opt.model == "wide":
        if opt.depth == 50:
            model = Net(50)
        elif opt.depth == 101:
            model = Net(101)
    if not opt.no_cuda:
        model = model.cuda()
    else:
        model.load_state_dict(torch.load(opt.pretrain_path)["state_dict"])
    return model
""",
            "the CPU branch: built on the CPU in every arm of the chain (a nested one too) and not moved there",
        ),
        Valid(
            """\
import torch
def _load_part(model, filename):
    checkpoint = torch.load(filename)
    part = {k: v for k, v in checkpoint["model_state"].items() if k in model.state_dict()}
    state_dict = model.state_dict()
    state_dict.update(part)
    model.load_state_dict(state_dict)
def _load_based_on_args(model, args):
    _load_part(model, args.ckpt)
def main(args, model):
    _load_based_on_args(model, args)
""",
            "a parameter handed on by a caller whose own model is a parameter of unknown callers: not known",
        ),
        Valid(
            """\
import torch
def _load_part(model, filename):
    checkpoint = torch.load(filename)
    model.load_state_dict({k: v for k, v in checkpoint["model_state"].items()})
def _load_twice(model, args):
    _load_part(model, args.ckpt)
    _load_again(model, args)
def _load_again(model, args):
    _load_twice(model, args)
""",
            "parameters handed on in a cycle of calls: nothing says where the model is",
        ),
        Valid(
            """\
import torch
import models
def save(model, opt, it, field, path):
    torch.save({"model_state_dict": {k: v.cpu() for k, v in model.state_dict().items()}, "field": field}, path)
    torch.save(opt.state_dict(), path + "_optim")
def init_model(args):
    model = getattr(models, args.model)(args)
    model.to(args.device)
    return model
def resume(args, path):
    model = init_model(args)
    save_dict = torch.load(path)
    model.load_state_dict(save_dict["model_state_dict"])
""",
            "the key read is written only by a save of CPU tensors and plain values; the optimizer's GPU state"
            " is saved bare to another file",
        ),
        Valid(
            """\
import torch
import models
def run(model, device):
    model.to(device)
if __name__ == "__main__":
    save_dict = torch.load("best.pth")
    model = getattr(models, "Net")()
    out = {}
    for k, v in save_dict["model_state_dict"].items():
        out[k.replace("rnn.", "rnn1.")] = v
    model.load_state_dict(out)
    run(model, "cuda")
""",
            "the move before the script's load is in a function defined above it, run only later: the model"
            " is not known to be on a device at the load",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x, J=None):
        out = self.fc(x)
        if J is not None:
            out = torch.matmul(J[None, :].expand(x.shape[0], -1, -1).to(x.device), out)
        return out
def main(path, device):
    model = Regressor()
    model.load_state_dict(torch.load(path))
    return model.to(device)
""",
            "the class's only move is of a tensor-only method's result (`J[None].expand(...).to(x.device)`) in a"
            " method that keeps nothing: a copy, no move of the module (VIBE's `Regressor.forward`)",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class HMR(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.smpl = nn.Linear(4, 4).to("cpu")
def main(path, device):
    model = HMR()
    model.load_state_dict(torch.load(path))
    return model.to(device)
""",
            'a class whose only move is `.to("cpu")`: a move to the CPU, not to a device (VIBE\'s `HMR`)',
        ),
        Valid(
            """\
import torch
import torch.nn as nn
import torchvision
class ResnetFC(nn.Module):
    def __init__(self, original_resnet):
        super().__init__()
        self.features = nn.Sequential(*list(original_resnet.children())[:-2])
def build_frame(weights):
    original_resnet = torchvision.models.resnet18(True)
    net = ResnetFC(original_resnet)
    net.load_state_dict(torch.load(weights))
    return net
""",
            "a wrapper (a class that moves nothing) of a model on the CPU when it was handed over: the"
            " wrapper is on the CPU too (Sound-of-Pixels' `build_frame`)",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
def build_modules(path):
    modules = {}
    modules["encoder"] = Net()
    modules["decoder"] = Net()
    reloaded = torch.load(path)
    for k, v in modules.items():
        v.load_state_dict(reloaded[k])
    for v in modules.values():
        v.cuda()
    return modules
""",
            "models built on the CPU, held in a local dict and loaded in a loop over it before the loop that"
            " moves them (SymbolicMathematics' `build_modules`)",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
from transformers import RobertaConfig, RobertaModel
class Seq2Seq(nn.Module):
    def __init__(self, encoder, decoder, config):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder
        self.config = config
def build(args):
    config = RobertaConfig.from_pretrained(args.config_name)
    encoder = RobertaModel.from_pretrained(args.name, config=config)
    layer = nn.TransformerDecoderLayer(d_model=config.hidden_size, nhead=config.num_attention_heads)
    decoder = nn.TransformerDecoder(layer, num_layers=6)
    model = Seq2Seq(encoder=encoder, decoder=decoder, config=config)
    model.load_state_dict(torch.load(args.load_model_path))
    return model
""",
            "a configuration read by `from_pretrained` is settings, never a model, and a torch.nn container keeps"
            " the fresh layer it is handed on the CPU: the wrapper is built there (CodeT5's `models.py`)",
        ),
        Valid(
            """\
import argparse
import torch
import torch.nn as nn
from transformers import RobertaModel
class DefectModel(nn.Module):
    def __init__(self, encoder, args):
        super().__init__()
        self.encoder = encoder
        self.args = args
def add_args(parser):
    parser.add_argument("--name")
    args = parser.parse_args()
    args.lang = "c"
    return args
def main():
    args = add_args(argparse.ArgumentParser())
    args.n_gpu = torch.cuda.device_count()
    model = RobertaModel.from_pretrained(args.name)
    model.resize_token_embeddings(32000)
    model = DefectModel(model, args)
    model.load_state_dict(torch.load(args.load_model_path))
    model.to(torch.device("cuda"))
""",
            "an argparse namespace (every return of `add_args` is `parse_args()`; setting `args.n_gpu` keeps it one)"
            " is no model, and `resize_token_embeddings` builds the new embedding where the old one is",
        ),
        Valid(
            """\
import torch
import torch.nn as nn


def main(path, name):
    backbones = {"a": nn.Linear(4, 4), "b": nn.Linear(4, 8)}
    backbone = backbones[name]
    backbone.load_state_dict(torch.load(path))
    backbone = backbone.to("cuda")
""",
            "a model picked from a dict literal of models freshly built on the CPU, loaded before its move"
            " (face.evoLVe's `BACKBONE_DICT[BACKBONE_NAME]`)",
        ),
        Valid(
            """\
import torch


def get_state_dict_on_cpu(obj):
    cpu_device = torch.device("cpu")
    state_dict = obj.state_dict()
    for key in state_dict.keys():
        state_dict[key] = state_dict[key].to(cpu_device)
    return state_dict


def save_ckpt(name, models, optimizers, n_iter):
    ckpt_dict = {"n_iter": n_iter}
    for prefix, model in models:
        ckpt_dict[prefix] = get_state_dict_on_cpu(model)
    for prefix, optimizer in optimizers:
        ckpt_dict[prefix] = optimizer.state_dict()
    torch.save(ckpt_dict, name)


def load_ckpt(name, models):
    ckpt_dict = torch.load(name)
    for prefix, model in models:
        model.load_state_dict(ckpt_dict[prefix])
    return ckpt_dict["n_iter"]
""",
            "every model state this file saves goes through a helper whose loop moves each entry to a CPU"
            " device bound to a name; the optimizers' states beside them are read by optimizers only"
            " (partial-conv's `get_state_dict_on_cpu`)",
        ),
        Valid(
            """\
import torch


def load_checkpoint(path):
    weights = torch.load(path)
    return weights.pop("epoch"), weights["state_dict"]


def resume(path):
    epoch, weights = load_checkpoint(path)
    return epoch + 1
""",
            "a helper returning the load as an element of a tuple: the caller unpacking it loads nothing",
        ),
        Valid(
            """\
import torch


def load_checkpoint(path, info):
    return info["epoch"], torch.load(path, map_location="cpu")


def resume(model, path, info):
    model.cuda()
    epoch, weights = load_checkpoint(path, info)
    model.load_state_dict(weights)
""",
            "the tuple's element loaded into the model is a load with `map_location`",
        ),
        Valid(
            """\
import torch


def tune(model, path):
    weights = torch.load(path)
    new_weights = {}
    for a, b in zip(list(model.state_dict()), list(weights)):
        new_weights[a] = weights[b]
    model.load_state_dict(new_weights)
""",
            "a checkpoint copied key by key into a model not known to be on a device: the copy may be the only one",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
def filter_param_dict(state_dict, prefix):
    res_dict = {}
    for k, p in state_dict.items():
        if k.startswith(prefix):
            res_dict[k] = p
    return res_dict
def train(path, device):
    net = nn.Linear(4, 2)
    pretrained = torch.load(path)
    pretrained = filter_param_dict(pretrained, "fc")
    net.load_state_dict(pretrained)
    net.to(device)
""",
            "the load's values pass through a filtering helper into a model still on the CPU: nothing is"
            " doubled on a GPU (the helper's view is followed as the load itself, SECOND's `filter_param_dict`)",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import Parameter
def l2_norm(x, axis=1):
    norm = torch.norm(x, 2, axis, True)
    return torch.div(x, norm)
class ArcHead(nn.Module):
    def __init__(self, in_features, out_features, device_id=None):
        super().__init__()
        self.device_id = device_id
        self.iter = 0
        self.weight = Parameter(torch.FloatTensor(out_features, in_features))
    def forward(self, x):
        self.iter += 1
        if self.device_id is None:
            return F.linear(x, self.weight)
        sub_weights = torch.chunk(self.weight, len(self.device_id), dim=0)
        temp_x = x.cuda(self.device_id[0])
        weight = l2_norm(sub_weights[0]).cuda(self.device_id[0])
        return F.linear(temp_x, weight).cuda(self.device_id[0])
def main(path, device):
    head = ArcHead(512, 10)
    head.load_state_dict(torch.load(path))
    head = head.to(device)
""",
            "the head's `.cuda()` calls in `forward` copy its input and the chunks of its weight (Tensor.cuda"
            " returns a copy) and keep none of them in the module: the head built here is still on the CPU at"
            " the load (face.evoLVe's `ArcFace`, `Am_softmax`)",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
def load(model_path):
    model = nn.Linear(3, 3)
    load_func = model.load_state_dict
    load_func(torch.load(model_path))
    return model.cuda()
""",
            "a load_state_dict held in a name counts only into a model moved to a device before it; this one is on the CPU",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class VNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
def main(args):
    model = VNet()
    model = nn.parallel.DataParallel(model, device_ids=range(args.ngpu))
    checkpoint = torch.load(args.resume)
    model.load_state_dict(checkpoint["state_dict"])
    if args.cuda:
        model = model.cuda()
""",
            "vnet's resume: `DataParallel` moves the model only when it is given exactly one device, and "
            "`range(args.ngpu)` is known at run time only: a model whose device depends on the machine is "
            "read as the CPU model it was built as",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
def load_model(path):
    model = Net()
    model = torch.nn.DataParallel(model)
    model.load_state_dict(torch.load(path)["model"])
    return model.cuda()
""",
            "`DataParallel(model)` without `device_ids` moves the model only where one GPU is visible: its "
            "device depends on the machine, and a load into it before the move is not reported (the bench's "
            "label decision, after obman's `DataParallel` model)",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Parallel(nn.Module):
    def __init__(self, module, device_ids=None):
        super().__init__()
        self.module = module
        self.device_ids = device_ids or list(range(torch.cuda.device_count()))
        if len(self.device_ids) == 1:
            self.module.cuda(self.device_ids[0])
def main(path):
    model = Parallel(nn.Linear(2, 2))
    model.load_state_dict(torch.load(path))
    model.cuda()
""",
            "the project's own copy of `DataParallel` moves the module only when one device id is in use: "
            "read as torch's class, a model whose device depends on the machine, loaded before its move",
        ),
        Valid(
            """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)


def restore(path, cpu=False):
    model = Net().to("cpu" if cpu else "cuda")
    if cpu:
        kwargs = {"map_location": "cpu"}
    else:
        kwargs = {"map_location": None}
    model.load_state_dict(torch.load(path, **kwargs))
    return model
""",
            "every binding of the keyword dict passes map_location",
        ),
        Valid(
            """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)


def restore(path, cpu=False):
    model = Net().to("cpu" if cpu else "cuda")
    if cpu:
        kwargs = {"map_location": "cpu"}
    else:
        kwargs = {}
    kwargs["weights_only"] = True
    model.load_state_dict(torch.load(path, **kwargs))
    return model
""",
            "the keyword dict is written after it is built: what it holds is not known",
        ),
        Valid(
            """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)


def restore(path, cpu=False, **kwargs):
    model = Net().to("cpu" if cpu else "cuda")
    model.load_state_dict(torch.load(path, **kwargs))
    return model
""",
            "the keywords come from the caller",
        ),
        Valid(
            """\
import torch
def test(model, path):
    check_point = torch.load(path)
    state_dict = {k[7:]: v for k, v in check_point["state_dict"].items()}
    model.load_state_dict(state_dict)
""",
            "a renamed copy into a model not known to be on a device: the copy may be the only one",
        ),
        Valid(
            """\
import torch
def main(config, module_arch, logger):
    model = config.init_obj("arch", module_arch)
    logger.info(model)
    checkpoint = torch.load(config.resume)
    state_dict = checkpoint["state_dict"]
    if config["n_gpu"] > 1:
        model = torch.nn.DataParallel(model)
    model.load_state_dict(state_dict)
    model = model.to(torch.device("cuda"))
""",
            "logged, wrapped for several GPUs, loaded, then moved by the same scope: on the CPU at the load",
        ),
        Valid(
            """\
import torch
def main(config, module_arch, logger):
    if "returns_feat" in config["arch"]["args"]:
        model = config.init_obj("arch", module_arch, returns_feat=False)
    else:
        model = config.init_obj("arch", module_arch)
    logger.info(model)
    checkpoint = torch.load(config.resume)
    state_dict = checkpoint["state_dict"]
    model.load_state_dict(state_dict)
    model = model.to(torch.device("cuda"))
""",
            "built on either branch of an if/else with no device, loaded, then moved: on the CPU at the load",
        ),
        Valid(
            """\
import argparse

import torch
import torch.nn as nn

PickClass = type("", (argparse.Action,), dict(__call__=lambda a, p, n, v, o: setattr(n, a.dest, a.choices[v])))


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)


class Large(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)


parser = argparse.ArgumentParser()
parser.add_argument("--net", choices=dict(small=Small, large=Large), default=Large, action=PickClass)
parser.add_argument("--load")
opts = parser.parse_args()
model = opts.net()
model.load_state_dict(torch.load(opts.load))
model.cuda()
""",
            "built by calling a command-line option whose choices and default are all classes that move nothing"
            " (RKD's `opts.base(pretrained=True)`): on the CPU at the load",
        ),
        Valid(
            """\
import numpy as np
import torch
import torch.nn as nn


def future_mask(n):
    return torch.from_numpy(np.triu(np.ones((1, n, n)), k=1)) == 0


class Captioner(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.fc = nn.Linear(opt.size, opt.size)

    def sample(self, probs, x):
        it = torch.multinomial(probs.cpu(), 1).cuda()
        mask = future_mask(x.size(1)).to(x.device)
        return self.fc(x * mask) + it

    def search(self, n, steps):
        table = [torch.zeros(steps, n).long() for _ in range(2)]
        for t in range(steps):
            for g in range(2):
                best = table[g][:, 0]
                it = table[g][t]
                self.fc(it.cuda().float())
        return best


def setup(opt):
    model = Captioner(opt)
    model.load_state_dict(torch.load(opt.start_from))
    return model


model = setup(OPTIONS)
model.cuda()
""",
            "AoANet's caption model: its only moves are of tensors it draws (`torch.multinomial(...).cuda()`), a"
            " module function returns (`future_mask(n).to(d)`) or a row of a value it indexes as an array"
            " (`table[g][:, 0]`); `setup(opt)` hands it options under an optimizer's name: on the CPU at the load",
        ),
        Valid(
            """\
import torch
import torch.nn as nn


class Beams(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, n)

    def search(self, n, steps):
        table = [torch.zeros(steps, n).long() for _ in range(2)]
        for t in range(steps):
            for g in range(2):
                table[g] = self.step(table[g], t)
                best = table[g][:, 0]
                it = table[g][t]
                self.fc(it.cuda().float())
        return best

    def step(self, beams, t):
        return beams


model = Beams(4)
model.load_state_dict(torch.load("beams.pt"))
model.cuda()
""",
            "a row of a value the class indexes as an array (`table[g][:, 0]`) moved by `.cuda()`: a copy of a tensor,"
            " no part of the model; on the CPU at the load",
        ),
        Valid(
            """\
import numpy as np
import torch
import torch.nn as nn


def future_mask(n):
    return torch.from_numpy(np.triu(np.ones((1, n, n)), k=1)) == 0


class Sampler(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, n)

    def sample(self, probs, x):
        it = torch.multinomial(probs.cpu(), 1).cuda()
        mask = future_mask(x.size(1)).to(x.device)
        return self.fc(x * mask) + it


model = Sampler(4)
model.load_state_dict(torch.load("sampler.pt"))
model.cuda()
""",
            "moves only of a draw of torch (`torch.multinomial(...).cuda()`) and of what a module function returning"
            " a tensor gives (`future_mask(n).to(d)`): copies; on the CPU at the load",
        ),
        Valid(
            """\
import torch
import torch.nn as nn


class Captioner(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.fc = nn.Linear(opt.size, opt.size)


def setup(opt):
    model = Captioner(opt)
    model.load_state_dict(torch.load(opt.start_from))
    return model


def main(opt):
    model = setup(opt)
    model.cuda()
""",
            "`Captioner(opt)`: `opt` reads as an optimizer's name, yet an optimizer is no module to wrap; the class"
            " moves nothing, so the model is on the CPU at the load",
        ),
        Valid(
            """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)


def _init_nets(n, device="cpu"):
    nets = {i: None for i in range(n)}
    for i in range(n):
        net = Net()
        if device == "cpu":
            net.to(device)
        else:
            net = net.cuda()
        nets[i] = net
    return nets, n


def main(path):
    nets, n = _init_nets(3, device="cpu")
    global_model = nets[0]
    global_model.load_state_dict(torch.load(path))
""",
            'MOON\'s `init_nets`: every call passes `device="cpu"`, so the `else` moving each net never runs and'
            " the dict of nets it returns holds CPU models",
        ),
        Valid(
            """\
import torch
import torch.nn as nn


def restore(path):
    net = nn.Linear(2, 2)
    net.to("cpu")
    net.load_state_dict(torch.load(path))
    return net.cuda()
""",
            '`net.to("cpu")` leaves a model built on the CPU there',
        ),
        Valid(
            """\
import torch
from registry import find_class


def rebuild(path):
    data = torch.load(path)
    kind = find_class(data["package"], data["network"], prefix="")
    net = kind(**data["kwargs"])
    net.load_state_dict(data["weights"])
    return net.cuda()
""",
            "the class and its settings are the checkpoint's own entries: the model is built bare, on the CPU,"
            " and moved after the load (pytorch_GAN_zoo's buildFeatureExtractor)",
        ),
        Valid(
            """\
import torch
import torch.nn as nn


def trunk(net):
    return nn.Sequential(*list(net.children())[:-1])


def rebuild(path):
    data = torch.load(path)
    net = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    net = trunk(net)
    net.load_state_dict(data["weights"])
    return net.cuda()
""",
            "trunk places nothing and is handed a model on the CPU: what it gives back is on the CPU too",
        ),
        Valid(
            """\
import torch

device = "cpu"


def evaluate(path, build):
    model = build().to(device)
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint.pop("model"))
""",
            "every binding of device is the CPU: the model popped into is not on a GPU",
        ),
    ]
    invalid = [
        Invalid(
            """\
import json
import sys

import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, 1)


if __name__ == "__main__":
    options = json.loads(sys.argv[1])
    head = Head(**options).cuda()
    state = torch.load(sys.argv[2])
    head.load_state_dict(state["weights"])
    head = head.cuda()
""",
            None,
        ),
        Invalid(
            """\
import torch


def evaluate(configs, build):
    model = build()
    if configs.device == "cuda":
        model = torch.nn.DataParallel(model)
    model = model.to(configs.device)
    checkpoint = torch.load(configs.checkpoint_path)
    model.load_state_dict(checkpoint.pop("model"))
""",
            None,
        ),
        Invalid(
            """\
import torch
from registry import find_class


def rebuild(path):
    data = torch.load(path)
    kind = find_class(data["package"], data["network"])
    net = kind(**data["kwargs"]).cuda()
    net.load_state_dict(data["weights"])
    return net
""",
            None,
        ),
        Invalid(
            """\
import torch
from registry import find_class


def rebuild(path, settings):
    data = torch.load(path)
    kind = find_class(data["package"], data["network"])
    net = kind(**settings)
    net.load_state_dict(data["weights"])
    return net
""",
            None,
        ),
        Invalid(
            """\
import torch
import torch.nn as nn


def place(net):
    return net.cuda()


def trunk(net):
    return place(net)


def rebuild(path):
    data = torch.load(path)
    net = nn.Linear(4, 4)
    net = trunk(net)
    net.load_state_dict(data["weights"])
    return net
""",
            None,
        ),
        Invalid(
            """\
import torch
import torch.nn as nn


def resume(path):
    model = nn.DataParallel(nn.Linear(4, 2)).cuda()
    map_location = None if torch.cuda.is_available() else "cpu"
    model.load_state_dict(torch.load(path, map_location=map_location))
""",
            None,
        ),
        Invalid(
            """\
import torch


def restore(model, path, use_gpu):
    model.cuda()
    model.load_state_dict(torch.load(path, None if use_gpu else "cpu"))
""",
            None,
        ),
        Invalid(
            """\
import torch
from nets import build_net

use_cuda = True
device = torch.device("cuda" if use_cuda else "cpu")


def test_restore(path):
    model = build_net().to(device)
    model.load_state_dict(torch.load(path)["model"])
""",
            """\
import torch
from nets import build_net

use_cuda = True
device = torch.device("cuda" if use_cuda else "cpu")


def test_restore(path):
    model = build_net().to(device)
    model.load_state_dict(torch.load(path, map_location="cpu")["model"])
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
class Decoder(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder
        self.fc = nn.Linear(8, 2)
def evaluate(path):
    encoder = Encoder()
    decoder = Decoder(encoder)
    decoder.cuda()
    encoder.load_state_dict(torch.load(path))
""",
            """\
import torch
import torch.nn as nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
class Decoder(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder
        self.fc = nn.Linear(8, 2)
def evaluate(path):
    encoder = Encoder()
    decoder = Decoder(encoder)
    decoder.cuda()
    encoder.load_state_dict(torch.load(path, map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Parallel(nn.Module):
    def __init__(self, module, device_ids=None):
        super().__init__()
        self.module = module
        self.device_ids = device_ids or list(range(torch.cuda.device_count()))
        if self.device_ids:
            self.module.cuda(self.device_ids[0])
def main(path):
    model = Parallel(nn.Linear(2, 2))
    model.load_state_dict(torch.load(path))
    model.cuda()
""",
            """\
import torch
import torch.nn as nn
class Parallel(nn.Module):
    def __init__(self, module, device_ids=None):
        super().__init__()
        self.module = module
        self.device_ids = device_ids or list(range(torch.cuda.device_count()))
        if self.device_ids:
            self.module.cuda(self.device_ids[0])
def main(path):
    model = Parallel(nn.Linear(2, 2))
    model.load_state_dict(torch.load(path, map_location="cpu"))
    model.cuda()
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Head(nn.Module):
    def __init__(self, path, backbone=None):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.backbone = backbone
        self.load_state_dict(torch.load(path))
def to_gpu(net):
    return net.cuda()
""",
            """\
import torch
import torch.nn as nn
class Head(nn.Module):
    def __init__(self, path, backbone=None):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.backbone = backbone
        self.load_state_dict(torch.load(path, map_location="cpu"))
def to_gpu(net):
    return net.cuda()
""",
        ),
        Invalid(
            """\
import torch
def main(config, module_arch, logger):
    if "returns_feat" in config["arch"]["args"]:
        model = config.init_obj("arch", module_arch, returns_feat=False)
    else:
        model = config.init_obj("arch", module_arch).cuda()
    logger.info(model)
    checkpoint = torch.load(config.resume)
    state_dict = checkpoint["state_dict"]
    model.load_state_dict(state_dict)
    model = model.to(torch.device("cuda"))
""",
            None,
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class VNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
def main(args):
    model = VNet()
    model = nn.parallel.DataParallel(model, device_ids=[args.gpu])
    checkpoint = torch.load(args.resume)
    model.load_state_dict(checkpoint["state_dict"])
"""
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import Parameter
def l2_norm(x, axis=1):
    norm = torch.norm(x, 2, axis, True)
    return torch.div(x, norm)
class ArcHead(nn.Module):
    def __init__(self, in_features, out_features, device_id=None):
        super().__init__()
        self.device_id = device_id
        self.iter = 0
        self.weight = Parameter(torch.FloatTensor(out_features, in_features))
    def forward(self, x):
        self.last = x.cuda()
        if self.device_id is None:
            return F.linear(x, self.weight)
        sub_weights = torch.chunk(self.weight, len(self.device_id), dim=0)
        temp_x = x.cuda(self.device_id[0])
        weight = l2_norm(sub_weights[0]).cuda(self.device_id[0])
        return F.linear(temp_x, weight).cuda(self.device_id[0])
def main(path, device):
    head = ArcHead(512, 10)
    head.load_state_dict(torch.load(path))
    head = head.to(device)
""",
            """\
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import Parameter
def l2_norm(x, axis=1):
    norm = torch.norm(x, 2, axis, True)
    return torch.div(x, norm)
class ArcHead(nn.Module):
    def __init__(self, in_features, out_features, device_id=None):
        super().__init__()
        self.device_id = device_id
        self.iter = 0
        self.weight = Parameter(torch.FloatTensor(out_features, in_features))
    def forward(self, x):
        self.last = x.cuda()
        if self.device_id is None:
            return F.linear(x, self.weight)
        sub_weights = torch.chunk(self.weight, len(self.device_id), dim=0)
        temp_x = x.cuda(self.device_id[0])
        weight = l2_norm(sub_weights[0]).cuda(self.device_id[0])
        return F.linear(temp_x, weight).cuda(self.device_id[0])
def main(path, device):
    head = ArcHead(512, 10)
    head.load_state_dict(torch.load(path, map_location="cpu"))
    head = head.to(device)
""",
        ),
        Invalid(
            """\
import re
import torch
import torch.nn as nn
def filter_param_dict(state_dict, include=None):
    include_re = re.compile(include) if include is not None else None
    res_dict = {}
    for k, p in state_dict.items():
        if include_re is not None and include_re.match(k) is None:
            continue
        res_dict[k] = p
    return res_dict
def train(path, device):
    net = nn.Linear(4, 2).to(device)
    model_dict = net.state_dict()
    pretrained = torch.load(path)
    pretrained = filter_param_dict(pretrained, "fc")
    model_dict.update({k: v for k, v in pretrained.items() if k in model_dict})
    net.load_state_dict(model_dict)
""",
            None,
        ),
        Invalid(
            """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)


def evaluate(weights):
    net = Net()
    for path in weights:
        net.load_state_dict(torch.load(path))
        net.cuda()
""",
            """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)


def evaluate(weights):
    net = Net()
    for path in weights:
        net.load_state_dict(torch.load(path, map_location="cpu"))
        net.cuda()
""",
        ),
        Invalid(
            """\
import torch


def get_state_dict_on_cpu(obj):
    cpu_device = torch.device("cuda")
    state_dict = obj.state_dict()
    for key in state_dict.keys():
        state_dict[key] = state_dict[key].to(cpu_device)
    return state_dict


def save_ckpt(name, models, optimizers, n_iter):
    ckpt_dict = {"n_iter": n_iter}
    for prefix, model in models:
        ckpt_dict[prefix] = get_state_dict_on_cpu(model)
    for prefix, optimizer in optimizers:
        ckpt_dict[prefix] = optimizer.state_dict()
    torch.save(ckpt_dict, name)


def load_ckpt(name, models):
    ckpt_dict = torch.load(name)
    for prefix, model in models:
        model.load_state_dict(ckpt_dict[prefix])
    return ckpt_dict["n_iter"]
""",
            None,
        ),
        Invalid(
            """\
import torch
import torch.nn as nn


def main(path, name):
    backbones = {"a": nn.Linear(4, 4), "b": nn.Linear(4, 8)}
    backbone = backbones[name]
    backbone = backbone.to("cuda")
    backbone.load_state_dict(torch.load(path))
""",
            """\
import torch
import torch.nn as nn


def main(path, name):
    backbones = {"a": nn.Linear(4, 4), "b": nn.Linear(4, 8)}
    backbone = backbones[name]
    backbone = backbone.to("cuda")
    backbone.load_state_dict(torch.load(path, map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
import torchvision.models as models
def main(args):
    model = models.__dict__[args.arch]().cuda()
    model.load_state_dict(torch.load(args.resume))
    return model
""",
            """\
import torch
import torchvision.models as models
def main(args):
    model = models.__dict__[args.arch]().cuda()
    model.load_state_dict(torch.load(args.resume, map_location="cpu"))
    return model
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class F(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
class G(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1).cuda()
def main(args, device):
    model_cls = F if args.uncond else G
    f = model_cls()
    f.load_state_dict(torch.load(args.load_path))
    return f.to(device)
""",
            """\
import torch
import torch.nn as nn
class F(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
class G(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1).cuda()
def main(args, device):
    model_cls = F if args.uncond else G
    f = model_cls()
    f.load_state_dict(torch.load(args.load_path, map_location="cpu"))
    return f.to(device)
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class VQVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
def _load_model(model, checkpoint, device):
    ckpt = torch.load(checkpoint)
    if model == "vqvae":
        model = VQVAE()
    model.load_state_dict(ckpt["model"])
    return model.to(device)
if __name__ == "__main__":
    vqvae = _load_model("vqvae", "vqvae.pt", "cuda")
    net = VQVAE().cuda()
    again = _load_model(net, "vqvae.pt", "cuda")
""",
            None,
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, path):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.cuda()
        self.fc.load_state_dict(torch.load(path))
""",
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, path):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.cuda()
        self.fc.load_state_dict(torch.load(path, map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, path):
        super().__init__()
        self.fc = nn.Linear(4, 2).cuda()
        self.fc.load_state_dict(torch.load(path))
""",
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, path):
        super().__init__()
        self.fc = nn.Linear(4, 2).cuda()
        self.fc.load_state_dict(torch.load(path, map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, path):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(4, device="cuda"))
        self.load_state_dict(torch.load(path))
""",
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, path):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(4, device="cuda"))
        self.load_state_dict(torch.load(path, map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2).cuda()
class Net(Base):
    def __init__(self, path):
        super().__init__()
        self.fc.load_state_dict(torch.load(path))
""",
            """\
import torch
import torch.nn as nn
class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2).cuda()
class Net(Base):
    def __init__(self, path):
        super().__init__()
        self.fc.load_state_dict(torch.load(path, map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, path):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self._place()
        self._load_weights(path)
    def _place(self):
        self.fc.to("cuda")
    def _load_weights(self, path):
        self.fc.load_state_dict(torch.load(path))
""",
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, path):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self._place()
        self._load_weights(path)
    def _place(self):
        self.fc.to("cuda")
    def _load_weights(self, path):
        self.fc.load_state_dict(torch.load(path, map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, path):
        super(Net, self).__init__()
        self.fc = nn.Linear(4, 2)
        super(Net, self).cuda()
        self._load_weights(path)
    def _load_weights(self, path):
        self.fc.load_state_dict(torch.load(path))
""",
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, path):
        super(Net, self).__init__()
        self.fc = nn.Linear(4, 2)
        super(Net, self).cuda()
        self._load_weights(path)
    def _load_weights(self, path):
        self.fc.load_state_dict(torch.load(path, map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
def save(model, path):
    torch.save({"model": {k: v.cpu() for k, v in model.state_dict().items()}, "net_g": model.netG.state_dict()}, path)
def resume(model, path):
    model.cuda()
    model.load_state_dict(torch.load(path)["model"])
""",
            """\
import torch
def save(model, path):
    torch.save({"model": {k: v.cpu() for k, v in model.state_dict().items()}, "net_g": model.netG.state_dict()}, path)
def resume(model, path):
    model.cuda()
    model.load_state_dict(torch.load(path, map_location="cpu")["model"])
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
class Evaluator(object):
    def __init__(self, model):
        self.model = model
    def evaluate(self, loader):
        return [self.model(x) for x in loader]
def train(path, loader, device):
    model = Net()
    evaluator = Evaluator(model=model)
    evaluator.evaluate(loader)
    model.load_state_dict(torch.load(path))
    model.to(device)
""",
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
class Evaluator(object):
    def __init__(self, model):
        self.model = model
    def evaluate(self, loader):
        return [self.model(x) for x in loader]
def train(path, loader, device):
    model = Net()
    evaluator = Evaluator(model=model)
    evaluator.evaluate(loader)
    model.load_state_dict(torch.load(path, map_location="cpu"))
    model.to(device)
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn


class Small(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 2)


class Wide(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 8).cuda()


MODELS = [Small]
MODELS.append(Wide)


def load_model(name):
    mdict = {m.__name__: m for m in MODELS}
    if name not in mdict:
        return None
    return mdict[name]


def main(name, path, device):
    Model = load_model(name)
    model = Model(4)
    model.load_state_dict(torch.load(path))
    model.to(device)
""",
            """\
import torch
import torch.nn as nn


class Small(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 2)


class Wide(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 8).cuda()


MODELS = [Small]
MODELS.append(Wide)


def load_model(name):
    mdict = {m.__name__: m for m in MODELS}
    if name not in mdict:
        return None
    return mdict[name]


def main(name, path, device):
    Model = load_model(name)
    model = Model(4)
    model.load_state_dict(torch.load(path, map_location="cpu"))
    model.to(device)
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn


class Small(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 2)


class Wide(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 8)


MODELS = [Small]
MODELS.append(Wide)
register(MODELS)


def load_model(name):
    mdict = {m.__name__: m for m in MODELS}
    if name not in mdict:
        return None
    return mdict[name]


def main(name, path, device):
    Model = load_model(name)
    model = Model(4)
    model.load_state_dict(torch.load(path))
    model.to(device)
""",
            """\
import torch
import torch.nn as nn


class Small(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 2)


class Wide(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 8)


MODELS = [Small]
MODELS.append(Wide)
register(MODELS)


def load_model(name):
    mdict = {m.__name__: m for m in MODELS}
    if name not in mdict:
        return None
    return mdict[name]


def main(name, path, device):
    Model = load_model(name)
    model = Model(4)
    model.load_state_dict(torch.load(path, map_location="cpu"))
    model.to(device)
""",
        ),
        # A part rebuilt with a device argument may be anywhere: the model is not known to be on the CPU.
        Invalid(
            """\
import torch
from pytorch_pretrained_bert import BertForMaskedLM
from pytorch_pretrained_bert.modeling import BertOnlyMLMHead
def load_fine_tuned(bert_model, path):
    model = BertForMaskedLM.from_pretrained(bert_model)
    model.cls = BertOnlyMLMHead(model.config, model.bert.embeddings.word_embeddings.weight, device="cuda")
    model.load_state_dict(torch.load(path))
    return model
""",
            """\
import torch
from pytorch_pretrained_bert import BertForMaskedLM
from pytorch_pretrained_bert.modeling import BertOnlyMLMHead
def load_fine_tuned(bert_model, path):
    model = BertForMaskedLM.from_pretrained(bert_model)
    model.cls = BertOnlyMLMHead(model.config, model.bert.embeddings.word_embeddings.weight, device="cuda")
    model.load_state_dict(torch.load(path, map_location="cpu"))
    return model
""",
        ),
        # The method returns a part of the module: ``.cuda()`` on it moves the model's weights.
        Invalid(
            """\
import torch
import torch.nn as nn
class Encoder(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lstm = nn.LSTM(dim, dim)
    def get_part(self):
        return self.lstm
    def encode(self, rows):
        part = self.get_part()
        part = part.cuda()
        return part(rows)
def main(path):
    model = Encoder(300)
    model.load_state_dict(torch.load(path))
    model = model.cuda()
""",
            """\
import torch
import torch.nn as nn
class Encoder(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lstm = nn.LSTM(dim, dim)
    def get_part(self):
        return self.lstm
    def encode(self, rows):
        part = self.get_part()
        part = part.cuda()
        return part(rows)
def main(path):
    model = Encoder(300)
    model.load_state_dict(torch.load(path, map_location="cpu"))
    model = model.cuda()
""",
        ),
        # ``config=`` is passed over, but ``device_map`` still places the weights.
        Invalid(
            """\
import torch
from transformers import AutoConfig, AutoModelForSequenceClassification
def load_lora(args):
    config = AutoConfig.from_pretrained(args.name, num_labels=3)
    model = AutoModelForSequenceClassification.from_pretrained(args.name, config=config, device_map="auto")
    model.load_state_dict(torch.load(args.lora_path), strict=False)
    return model
""",
            """\
import torch
from transformers import AutoConfig, AutoModelForSequenceClassification
def load_lora(args):
    config = AutoConfig.from_pretrained(args.name, num_labels=3)
    model = AutoModelForSequenceClassification.from_pretrained(args.name, config=config, device_map="auto")
    model.load_state_dict(torch.load(args.lora_path, map_location="cpu"), strict=False)
    return model
""",
        ),
        # Another model handed in by keyword may be on a device: not known to be on the CPU.
        Invalid(
            """\
import torch
from transformers import AutoConfig, EncoderDecoderModel
def load_pair(args, encoder):
    config = AutoConfig.from_pretrained(args.name)
    model = EncoderDecoderModel.from_pretrained(args.name, config=config, encoder=encoder)
    model.load_state_dict(torch.load(args.path))
    return model
""",
            """\
import torch
from transformers import AutoConfig, EncoderDecoderModel
def load_pair(args, encoder):
    config = AutoConfig.from_pretrained(args.name)
    model = EncoderDecoderModel.from_pretrained(args.name, config=config, encoder=encoder)
    model.load_state_dict(torch.load(args.path, map_location="cpu"))
    return model
""",
        ),
        # A pickled module the load restored where it was saved: its
        # ``state_dict()`` holds those very tensors (no fix: stored in a name).
        Invalid(
            """\
import torch
import torch.nn as nn
def resume(path):
    model = nn.Linear(4, 2).cuda()
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["model"].state_dict())
""",
        ),
        Invalid(
            """\
import torch
from pytorch_pretrained_bert import BertForMaskedLM
def load_fine_tuned(bert_model, path):
    model = BertForMaskedLM.from_pretrained(bert_model)
    model.cuda()
    model.load_state_dict(torch.load(path))
    return model
""",
            """\
import torch
from pytorch_pretrained_bert import BertForMaskedLM
def load_fine_tuned(bert_model, path):
    model = BertForMaskedLM.from_pretrained(bert_model)
    model.cuda()
    model.load_state_dict(torch.load(path, map_location="cpu"))
    return model
""",
        ),
        Invalid(
            """\
import importlib
import torch
def run(args):
    model = getattr(importlib.import_module(args.cam_network), "CAM")().cuda()
    model.load_state_dict(torch.load(args.cam_weights_name + ".pth"), strict=True)
""",
            """\
import importlib
import torch
def run(args):
    model = getattr(importlib.import_module(args.cam_network), "CAM")().cuda()
    model.load_state_dict(torch.load(args.cam_weights_name + ".pth", map_location="cpu"), strict=True)
""",
        ),
        Invalid(
            """\
import torch
def train(args, device):
    Model = eval(args.model_type)
    model = Model(args.classes)
    model.to(device)
    model.load_state_dict(torch.load(args.pretrained))
""",
            """\
import torch
def train(args, device):
    Model = eval(args.model_type)
    model = Model(args.classes)
    model.to(device)
    model.load_state_dict(torch.load(args.pretrained, map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
def make_optimizer(cfg, model):
    return getattr(torch.optim, cfg.name)(model.parameters(), lr=cfg.lr)
def train(cfg, path):
    model = nn.Linear(4, 2)
    optimizer = make_optimizer(cfg, model)
    model.cuda()
    optimizer.load_state_dict(torch.load(path))
""",
            """\
import torch
import torch.nn as nn
def make_optimizer(cfg, model):
    return getattr(torch.optim, cfg.name)(model.parameters(), lr=cfg.lr)
def train(cfg, path):
    model = nn.Linear(4, 2)
    optimizer = make_optimizer(cfg, model)
    model.cuda()
    optimizer.load_state_dict(torch.load(path, map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
def train(path):
    net = nn.Linear(4, 2)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    net.cuda()
    optimizer.load_state_dict(torch.load(path)["optimizer"])
""",
            """\
import torch
import torch.nn as nn
def train(path):
    net = nn.Linear(4, 2)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    net.cuda()
    optimizer.load_state_dict(torch.load(path, map_location="cpu")["optimizer"])
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class PoseNet(nn.Module):
    def __init__(self, cfg, **kwargs):
        super().__init__()
        self.head = nn.Conv2d(cfg.channels, cfg.joints, 1, **kwargs)
def get_pose_net(cfg, **kwargs):
    model = PoseNet(cfg, **kwargs)
    return model
def main(cfg):
    model = get_pose_net(cfg)
    model.load_state_dict(torch.load(cfg.model_file))
    model = torch.nn.DataParallel(model).cuda()
""",
            """\
import torch
import torch.nn as nn
class PoseNet(nn.Module):
    def __init__(self, cfg, **kwargs):
        super().__init__()
        self.head = nn.Conv2d(cfg.channels, cfg.joints, 1, **kwargs)
def get_pose_net(cfg, **kwargs):
    model = PoseNet(cfg, **kwargs)
    return model
def main(cfg):
    model = get_pose_net(cfg)
    model.load_state_dict(torch.load(cfg.model_file, map_location="cpu"))
    model = torch.nn.DataParallel(model).cuda()
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Small(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.fc = nn.Linear(8, classes)
def setup():
    archs = {"small": Small}
    return archs
def load(archs, name, path):
    model = archs[name](10)
    model.load_state_dict(torch.load(path))
    return model
""",
            """\
import torch
import torch.nn as nn
class Small(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.fc = nn.Linear(8, classes)
def setup():
    archs = {"small": Small}
    return archs
def load(archs, name, path):
    model = archs[name](10)
    model.load_state_dict(torch.load(path, map_location="cpu"))
    return model
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class OnGpu(nn.Module):
    def __init__(self, path):
        super().__init__()
        self.fc = nn.Linear(8, 2)
        self.cuda()
        self.load_state_dict(torch.load(path))
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2)
    def _load_pretrained(self, path):
        state = torch.load(path)
        self.load_state_dict(state)
def build(path):
    net = Net().cuda()
    net._load_pretrained(path)
    return net
""",
            """\
import torch
import torch.nn as nn
class OnGpu(nn.Module):
    def __init__(self, path):
        super().__init__()
        self.fc = nn.Linear(8, 2)
        self.cuda()
        self.load_state_dict(torch.load(path, map_location="cpu"))
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2)
    def _load_pretrained(self, path):
        state = torch.load(path)
        self.load_state_dict(state)
def build(path):
    net = Net().cuda()
    net._load_pretrained(path)
    return net
""",
            count=2,
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2)
def _build(on_gpu):
    if on_gpu:
        model = Tiny().cuda()
    else:
        model = Tiny()
    return model
def _load(model, path):
    model.load_state_dict(torch.load(path))
def run(path):
    _load(_build(True), path)
""",
            """\
import torch
import torch.nn as nn
class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2)
def _build(on_gpu):
    if on_gpu:
        model = Tiny().cuda()
    else:
        model = Tiny()
    return model
def _load(model, path):
    model.load_state_dict(torch.load(path, map_location="cpu"))
def run(path):
    _load(_build(True), path)
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Tiny(nn.Module):
    def __init__(self, classes=10, device=None):
        super().__init__()
        self.fc = nn.Linear(8, classes, device=device)
def tiny(**kwargs):
    model = Tiny(**kwargs)
    model.load_state_dict(torch.load("tiny.pth"))
    return model
def tiny_gpu(path):
    model = Tiny().cuda()
    _load_pretrained(model, path)
    _load_pretrained(Tiny(), path)
def _load_pretrained(model, path):
    state = torch.load(path)
    model.load_state_dict(state, strict=False)
""",
            """\
import torch
import torch.nn as nn
class Tiny(nn.Module):
    def __init__(self, classes=10, device=None):
        super().__init__()
        self.fc = nn.Linear(8, classes, device=device)
def tiny(**kwargs):
    model = Tiny(**kwargs)
    model.load_state_dict(torch.load("tiny.pth", map_location="cpu"))
    return model
def tiny_gpu(path):
    model = Tiny().cuda()
    _load_pretrained(model, path)
    _load_pretrained(Tiny(), path)
def _load_pretrained(model, path):
    state = torch.load(path)
    model.load_state_dict(state, strict=False)
""",
            count=2,
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Small(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.fc = nn.Linear(8, classes)
class OnGpu(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.fc = nn.Linear(64, classes).cuda()
ARCHS = {"small": Small, "gpu": OnGpu}
def load(name, path):
    net = Small(10).cuda()
    model = nn.DataParallel(net)
    model.load_state_dict(torch.load(path))
    other = ARCHS[name](10)
    other.load_state_dict(torch.load(path))
""",
            """\
import torch
import torch.nn as nn
class Small(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.fc = nn.Linear(8, classes)
class OnGpu(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.fc = nn.Linear(64, classes).cuda()
ARCHS = {"small": Small, "gpu": OnGpu}
def load(name, path):
    net = Small(10).cuda()
    model = nn.DataParallel(net)
    model.load_state_dict(torch.load(path, map_location="cpu"))
    other = ARCHS[name](10)
    other.load_state_dict(torch.load(path, map_location="cpu"))
""",
            count=2,
        ),
        Invalid(
            """\
import torch
from peft import set_peft_model_state_dict
def load_weights(model, state):
    model.load_state_dict(state, strict=False)
def resume(model, path):
    set_peft_model_state_dict(model, torch.load(path))
    load_weights(model, torch.load(path + ".full"))
    load_weights(model, torch.load(path + ".cpu", map_location="cpu"))
""",
            None,
            count=2,
        ),
        Invalid(
            """\
import torch
import torchvision
def evaluate_all(paths, device):
    net = torchvision.models.resnet18()
    for p in paths:
        net.load_state_dict(torch.load(p))
        net.cuda()
""",
            """\
import torch
import torchvision
def evaluate_all(paths, device):
    net = torchvision.models.resnet18()
    for p in paths:
        net.load_state_dict(torch.load(p, map_location="cpu"))
        net.cuda()
""",
        ),
        Invalid(
            """\
import torch
from collections import OrderedDict
from utils import convert_state_dict
def validate(cfg, args, model):
    state = convert_state_dict(torch.load(args.model_path)["model_state"])
    model.load_state_dict(state)
    model.load_state_dict(OrderedDict(torch.load(args.ema_path)))
""",
            count=2,
        ),
        Invalid(
            """\
import torch
def save(model, path):
    torch.save({"model": model.cpu().state_dict(), "optimizer": optimizer.state_dict()}, path)
def save_last(model):
    model.cpu()
    model.cuda()
    torch.save(model.state_dict(), "last.pth")
def load(model, path):
    model.load_state_dict(torch.load(path)["model"])
""",
            """\
import torch
def save(model, path):
    torch.save({"model": model.cpu().state_dict(), "optimizer": optimizer.state_dict()}, path)
def save_last(model):
    model.cpu()
    model.cuda()
    torch.save(model.state_dict(), "last.pth")
def load(model, path):
    model.load_state_dict(torch.load(path, map_location="cpu")["model"])
""",
        ),
        Invalid(
            """\
import torch
model = Net().cuda()
model.load_state_dict(torch.load("best.pt"))
""",
            """\
import torch
model = Net().cuda()
model.load_state_dict(torch.load("best.pt", map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch as T
net.load_state_dict(T.load(args.weights, weights_only=True), strict=False)
ema.load_state_dict(state_dict=T.load(
    args.ema_weights,
)["ema"])
""",
            """\
import torch as T
net.load_state_dict(T.load(args.weights, weights_only=True, map_location="cpu"), strict=False)
ema.load_state_dict(state_dict=T.load(
    args.ema_weights,
    map_location="cpu",
)["ema"])
""",
            count=2,
        ),
        Invalid(
            """\
import torch
from torchvision.models import alexnet
def build(path, gpu):
    net = alexnet(True)
    if gpu:
        net.cuda()
    else:
        net.eval()
    net.load_state_dict(torch.load(path))
    return net
""",
            """\
import torch
from torchvision.models import alexnet
def build(path, gpu):
    net = alexnet(True)
    if gpu:
        net.cuda()
    else:
        net.eval()
    net.load_state_dict(torch.load(path, map_location="cpu"))
    return net
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.gru = nn.GRU(hidden, hidden)
        self.register_buffer("h0", self.init_hidden(hidden))
    def init_hidden(self, hidden):
        return torch.zeros(1, 1, hidden).cuda()
decoder = Decoder(256)
decoder.load_state_dict(torch.load("decoder.pth"))
""",
            """\
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.gru = nn.GRU(hidden, hidden)
        self.register_buffer("h0", self.init_hidden(hidden))
    def init_hidden(self, hidden):
        return torch.zeros(1, 1, hidden).cuda()
decoder = Decoder(256)
decoder.load_state_dict(torch.load("decoder.pth", map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
def resume(model, optimizer, path):
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    return checkpoint["epoch"]
""",
        ),
        Invalid(
            """\
import torch

class Trainer:
    def restore(self, path):
        with open(path, "rb") as fh:
            state = torch.load(fh)
        self.model.module.load_state_dict(state)
""",
        ),
        Invalid(
            """\
import os
import torch
def build(model, path):
    if os.path.exists(path):
        state = torch.load(path)
    else:
        state = model.state_dict()
    model.load_state_dict(state)
""",
        ),
        Invalid(
            """\
import os

import torch


class CheckpointIO(object):
    def __init__(self, checkpoint_dir="./chkpts", **kwargs):
        self.module_dict = kwargs
        self.checkpoint_dir = checkpoint_dir

    def save(self, filename, **kwargs):
        outdict = kwargs
        for k, v in self.module_dict.items():
            outdict[k] = v.state_dict()
        torch.save(outdict, os.path.join(self.checkpoint_dir, filename))

    def load_file(self, filename):
        state_dict = torch.load(filename)
        scalars = self.parse_state_dict(state_dict)
        return scalars

    def parse_state_dict(self, state_dict):
        for k, v in self.module_dict.items():
            if k in state_dict:
                v.load_state_dict(state_dict[k])
        return {k: v for k, v in state_dict.items() if k not in self.module_dict}
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Small(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 2)
def _load_network(network, path):
    network.load_state_dict(torch.load(path))
    return network
structure = Small(opt.n)
if opt.gpu:
    structure = Small(opt.n).cuda()
model = _load_network(structure, opt.path)
""",
            """\
import torch
import torch.nn as nn
class Small(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 2)
def _load_network(network, path):
    network.load_state_dict(torch.load(path, map_location="cpu"))
    return network
structure = Small(opt.n)
if opt.gpu:
    structure = Small(opt.n).cuda()
model = _load_network(structure, opt.path)
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Coded(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gen = nn.Linear(dim, dim)
        self.register_buffer("codes", torch.randn(8, dim).cuda())
class Embedded(nn.Module):
    def __init__(self, table):
        super().__init__()
        self.emb = nn.Embedding.from_pretrained(torch.tensor(table).cuda())
coded = Coded(16)
coded.load_state_dict(torch.load("coded.pt"))
embedded = Embedded([[0.0, 1.0]])
embedded.load_state_dict(torch.load("embedded.pt"))
""",
            """\
import torch
import torch.nn as nn
class Coded(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gen = nn.Linear(dim, dim)
        self.register_buffer("codes", torch.randn(8, dim).cuda())
class Embedded(nn.Module):
    def __init__(self, table):
        super().__init__()
        self.emb = nn.Embedding.from_pretrained(torch.tensor(table).cuda())
coded = Coded(16)
coded.load_state_dict(torch.load("coded.pt", map_location="cpu"))
embedded = Embedded([[0.0, 1.0]])
embedded.load_state_dict(torch.load("embedded.pt", map_location="cpu"))
""",
            count=2,
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.scales = nn.ParameterDict()
    def grow(self, name):
        scale = torch.ones(1).cuda()
        self.scales[name] = scale
        return scale
net = Scaled()
net.load_state_dict(torch.load("scaled.pt"))
""",
            """\
import torch
import torch.nn as nn
class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.scales = nn.ParameterDict()
    def grow(self, name):
        scale = torch.ones(1).cuda()
        self.scales[name] = scale
        return scale
net = Scaled()
net.load_state_dict(torch.load("scaled.pt", map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
def place(net):
    net.cuda()
def prepare(net):
    place(net)
def run(path):
    model = nn.Linear(4, 2)
    prepare(model)
    model.load_state_dict(torch.load(path))
""",
            """\
import torch
import torch.nn as nn
def place(net):
    net.cuda()
def prepare(net):
    place(net)
def run(path):
    model = nn.Linear(4, 2)
    prepare(model)
    model.load_state_dict(torch.load(path, map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
def read_checkpoint(path):
    state = torch.load(path)
    return state
def resume(path):
    model = nn.Linear(4, 2).cuda()
    checkpoint = read_checkpoint(path)
    model.load_state_dict(checkpoint["model"])
"""
        ),
        Invalid(
            """\
import torch
class Trainer:
    def __init__(self, model, device):
        self.model = model.to(device)
    def test(self, path):
        best = torch.load(path).get("model_state_dict")
        self.model.load_state_dict(best)
"""
        ),
        Invalid(
            """\
import torch
def resume(model, path):
    model.cuda()
    model.load_state_dict(torch.load(path).get("model"))
""",
            """\
import torch
def resume(model, path):
    model.cuda()
    model.load_state_dict(torch.load(path, map_location="cpu").get("model"))
""",
        ),
        Invalid(
            """\
import torch
def test(net, path):
    net.cuda()
    checkpoint = torch.load(path)
    checkpoint = checkpoint["state_dict"]
    base_dict = {".".join(k.split(".")[1:]): v for k, v in list(checkpoint.items())}
    net.load_state_dict(base_dict)
"""
        ),
        Invalid(
            """\
import torch
def tune(model, path, skip_fc):
    model = torch.nn.DataParallel(model).cuda()
    sd = torch.load(path)
    sd = sd["state_dict"]
    model_dict = model.state_dict()
    if skip_fc:
        sd = {k: v for k, v in sd.items() if "fc" not in k}
    model_dict.update(sd)
    model.load_state_dict(model_dict)
"""
        ),
        Invalid(
            """\
import torch
def test(model, path):
    model = model.cuda()
    checkpoint = torch.load(path)
    d = dict()
    for key, value in checkpoint["state_dict"].items():
        if key.startswith("module."):
            d[key[7:]] = value
    model.load_state_dict(d)
"""
        ),
        Invalid(
            """\
import torch
class Tester:
    def __init__(self, model, device):
        self.model = model.to(device)
    def load(self, path):
        ck = torch.load(path)
        sd = {k[7:]: v for k, v in ck["state_dict"].items()}
        self.model.load_state_dict(sd)
"""
        ),
        Invalid(
            """\
import torch
class Trainer:
    def __init__(self, encoder, depth, device):
        self.models = {"encoder": encoder, "depth": depth}
        self.models["encoder"].to(device)
        self.models["depth"].to(device)
    def load_model(self, names, folder):
        for n in names:
            model_dict = self.models[n].state_dict()
            pretrained_dict = torch.load(folder + n + ".pth")
            pretrained_dict = {k: v for k, v in pretrained_dict.items() if k in model_dict}
            model_dict.update(pretrained_dict)
            self.models[n].load_state_dict(model_dict)
"""
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 2)
def get_model(checkpoint):
    model = Net(checkpoint["n"]).cuda()
    model.load_state_dict(checkpoint["state"])
    return model
def main(paths):
    for path in paths:
        checkpoint = torch.load(path)
        model = get_model(checkpoint)
""",
            None,
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
use_cuda = torch.cuda.is_available()
def _load(path):
    if use_cuda:
        checkpoint = torch.load(path)
    else:
        checkpoint = torch.load(path, map_location=lambda storage, loc: storage)
    return checkpoint
def _load_checkpoint(path, model):
    checkpoint = _load(path)
    s = checkpoint["state_dict"]
    new_s = {}
    for k, v in s.items():
        new_s[k.replace("module.", "")] = v
    model.load_state_dict(new_s)
model = nn.Linear(4, 2).cuda()
_load_checkpoint("a.pth", model)
""",
            None,
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
def _restore(path, model, device):
    ck = torch.load(path)
    sd = ck["state_dict"]
    model_dict = model.state_dict()
    sd = {k: v for k, v in sd.items() if k in model_dict}
    model.load_state_dict(sd)
    model.to(device)
def main(device):
    model = nn.Linear(4, 2).to(device)
    _restore("a.pth", model, device)
""",
            None,
        ),
        Invalid(
            """\
import torch
def _load(path):
    if torch.cuda.is_available():
        return torch.load(path)
    return torch.load(path, map_location="cpu")
def resume(path):
    model = torch.nn.Linear(4, 2).cuda()
    model.load_state_dict(_load(path)["model"])
""",
            None,
        ),
        Invalid(
            """\
import torch
def save_network(network, path):
    state_dict = network.state_dict()
    for key, param in state_dict.items():
        state_dict[key] = param.cpu()
    torch.save(state_dict, path)
def save_optimizer(optimizer, path):
    torch.save(optimizer.state_dict(), path)
def load_optimizer(optimizer, path):
    optimizer.load_state_dict(torch.load(path))
""",
            """\
import torch
def save_network(network, path):
    state_dict = network.state_dict()
    for key, param in state_dict.items():
        state_dict[key] = param.cpu()
    torch.save(state_dict, path)
def save_optimizer(optimizer, path):
    torch.save(optimizer.state_dict(), path)
def load_optimizer(optimizer, path):
    optimizer.load_state_dict(torch.load(path, map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
def save_network(network, path):
    state_dict = network.state_dict()
    for key, param in state_dict.items():
        state_dict[key] = param.cpu()
    torch.save(state_dict, path)
def save_optimizer(optimizer, path):
    torch.save(optimizer.state_dict(), path)
def load(obj, path):
    obj.load_state_dict(torch.load(path))
""",
            """\
import torch
def save_network(network, path):
    state_dict = network.state_dict()
    for key, param in state_dict.items():
        state_dict[key] = param.cpu()
    torch.save(state_dict, path)
def save_optimizer(optimizer, path):
    torch.save(optimizer.state_dict(), path)
def load(obj, path):
    obj.load_state_dict(torch.load(path, map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
def save_network(network, path):
    state_dict = network.state_dict()
    for key, param in state_dict.items():
        if "fc" in key:
            state_dict[key] = param.cpu()
    torch.save(state_dict, path)
def load_network(network, path):
    network.load_state_dict(torch.load(path))
""",
            """\
import torch
def save_network(network, path):
    state_dict = network.state_dict()
    for key, param in state_dict.items():
        if "fc" in key:
            state_dict[key] = param.cpu()
    torch.save(state_dict, path)
def load_network(network, path):
    network.load_state_dict(torch.load(path, map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
def save_network(network, others, path):
    network.cpu()
    network = others[0]
    torch.save(network.state_dict(), path)
def load_network(network, path):
    network.load_state_dict(torch.load(path))
""",
            """\
import torch
def save_network(network, others, path):
    network.cpu()
    network = others[0]
    torch.save(network.state_dict(), path)
def load_network(network, path):
    network.load_state_dict(torch.load(path, map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
def main(path):
    checkpoint = torch.load(path)
    model = nn.Linear(4, 2).cuda()
    saved = checkpoint["model_g"]
    new_state_dict = {}
    for k, v in saved.items():
        try:
            new_state_dict[k] = saved["module." + k]
        except KeyError:
            new_state_dict[k] = v
    model.load_state_dict(new_state_dict)
""",
            None,
        ),
        Invalid(
            """\
import importlib
import torch
def main(args, path):
    model = getattr(importlib.import_module(args.network), "Net")()
    param_groups = model.get_parameter_groups()
    model.load_state_dict(torch.load(path))
    model = torch.nn.DataParallel(model).cuda()
""",
            """\
import importlib
import torch
def main(args, path):
    model = getattr(importlib.import_module(args.network), "Net")()
    param_groups = model.get_parameter_groups()
    model.load_state_dict(torch.load(path, map_location="cpu"))
    model = torch.nn.DataParallel(model).cuda()
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
def build_modules(path):
    modules = {}
    modules["encoder"] = Net()
    modules["decoder"] = Net()
    for v in modules.values():
        v.cuda()
    for k, v in modules.items():
        v.load_state_dict(torch.load(path)[k])
    return modules
""",
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
def build_modules(path):
    modules = {}
    modules["encoder"] = Net()
    modules["decoder"] = Net()
    for v in modules.values():
        v.cuda()
    for k, v in modules.items():
        v.load_state_dict(torch.load(path, map_location="cpu")[k])
    return modules
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
def build_modules(path):
    modules = {}
    modules["encoder"] = Net()
    modules["encoder"].cuda()
    for k, v in modules.items():
        v.load_state_dict(torch.load(path)[k])
    return modules
""",
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
def build_modules(path):
    modules = {}
    modules["encoder"] = Net()
    modules["encoder"].cuda()
    for k, v in modules.items():
        v.load_state_dict(torch.load(path, map_location="cpu")[k])
    return modules
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
import torchvision
class ResnetFC(nn.Module):
    def __init__(self, original_resnet):
        super().__init__()
        self.features = nn.Sequential(*list(original_resnet.children())[:-2])
def build_frame(weights):
    original_resnet = torchvision.models.resnet18(True).cuda()
    net = ResnetFC(original_resnet)
    net.load_state_dict(torch.load(weights))
    return net
""",
            """\
import torch
import torch.nn as nn
import torchvision
class ResnetFC(nn.Module):
    def __init__(self, original_resnet):
        super().__init__()
        self.features = nn.Sequential(*list(original_resnet.children())[:-2])
def build_frame(weights):
    original_resnet = torchvision.models.resnet18(True).cuda()
    net = ResnetFC(original_resnet)
    net.load_state_dict(torch.load(weights, map_location="cpu"))
    return net
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class HMR(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.smpl = nn.Linear(4, 4).to("cuda")
def main(path, device):
    model = HMR()
    model.load_state_dict(torch.load(path))
    return model.to(device)
""",
            """\
import torch
import torch.nn as nn
class HMR(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.smpl = nn.Linear(4, 4).to("cuda")
def main(path, device):
    model = HMR()
    model.load_state_dict(torch.load(path, map_location="cpu"))
    return model.to(device)
""",
        ),
        Invalid(
            """\
import torch
def _load_part(model, filename):
    checkpoint = torch.load(filename)
    part = {k: v for k, v in checkpoint["model_state"].items() if k in model.state_dict()}
    state_dict = model.state_dict()
    state_dict.update(part)
    model.load_state_dict(state_dict)
def _load_based_on_args(model, args):
    _load_part(model, args.ckpt)
def eval_single_ckpt(args):
    model = build(args)
    model.cuda()
    _load_based_on_args(model, args)
""",
            None,
        ),
        Invalid(
            """\
import torch
import models
def save(model, opt, field, path):
    torch.save({"model_state_dict": {k: v.cpu() for k, v in model.state_dict().items()}, "field": field}, path)
    torch.save({"model_state_dict": model.state_dict(), "optimizer": opt.state_dict()}, path + ".full")
def init_model(args):
    model = getattr(models, args.model)(args)
    model.to(args.device)
    return model
def resume(args, path):
    model = init_model(args)
    save_dict = torch.load(path)
    model.load_state_dict(save_dict["model_state_dict"])
""",
            None,
        ),
        Invalid(
            """\
import torch
def save(model, state, path):
    torch.save({"model_state_dict": {k: v.cpu() for k, v in model.state_dict().items()}}, path)
    torch.save(state, path + ".full")
def resume(model, path):
    model.load_state_dict(torch.load(path)["model_state_dict"])
""",
            """\
import torch
def save(model, state, path):
    torch.save({"model_state_dict": {k: v.cpu() for k, v in model.state_dict().items()}}, path)
    torch.save(state, path + ".full")
def resume(model, path):
    model.load_state_dict(torch.load(path, map_location="cpu")["model_state_dict"])
""",
        ),
        Invalid(
            """\
import torch
import models
def run(model, device):
    model.eval()
if __name__ == "__main__":
    save_dict = torch.load("best.pth")
    model = getattr(models, "Net")()
    model.to("cuda")
    out = {}
    for k, v in save_dict["model_state_dict"].items():
        out[k.replace("rnn.", "rnn1.")] = v
    model.load_state_dict(out)
    run(model, "cuda")
""",
            None,
        ),
        Invalid(
            """\
import argparse
import torch
import torch.nn as nn
from transformers import RobertaModel
class DefectModel(nn.Module):
    def __init__(self, encoder, args):
        super().__init__()
        self.encoder = encoder
        self.args = args
def add_args(parser):
    parser.add_argument("--name")
    args = parser.parse_args()
    return RobertaModel.from_pretrained(args.name).cuda()
def main():
    args = add_args(argparse.ArgumentParser())
    model = RobertaModel.from_pretrained("roberta-base")
    model = DefectModel(model, args)
    model.load_state_dict(torch.load("model.bin"))
""",
            """\
import argparse
import torch
import torch.nn as nn
from transformers import RobertaModel
class DefectModel(nn.Module):
    def __init__(self, encoder, args):
        super().__init__()
        self.encoder = encoder
        self.args = args
def add_args(parser):
    parser.add_argument("--name")
    args = parser.parse_args()
    return RobertaModel.from_pretrained(args.name).cuda()
def main():
    args = add_args(argparse.ArgumentParser())
    model = RobertaModel.from_pretrained("roberta-base")
    model = DefectModel(model, args)
    model.load_state_dict(torch.load("model.bin", map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
def load(model_path):
    model = nn.DataParallel(nn.Linear(3, 3)).cuda()
    checkpoint = torch.load(model_path)
    if "state_dict" in checkpoint.keys():
        checkpoint = checkpoint["state_dict"]
    load_func = model.load_state_dict if isinstance(model, nn.DataParallel) else model.module.load_state_dict
    load_func(checkpoint)
    return model
""",
        ),
        Invalid(
            """\
import os
import torch
import torch.nn as nn


def load_checkpoint(path):
    if not os.path.exists(path):
        return None
    state = torch.load(path)
    return state


model = nn.DataParallel(nn.Linear(2, 2)).cuda()
checkpoint = load_checkpoint("latest.pth")
if checkpoint is not None:
    model.load_state_dict(checkpoint["state_dict"])
""",
            None,
        ),
        Invalid(
            """\
import torch
import torch.nn as nn


def load_checkpoint(path):
    weights = torch.load(path)
    epoch = None
    if "epoch" in weights:
        epoch = weights.pop("epoch")
    if "state_dict" in weights:
        state_dict = weights["state_dict"]
    else:
        state_dict = weights
    return epoch, state_dict


model = nn.Linear(2, 2).cuda()
epoch, weights = load_checkpoint("best.pth")
model.load_state_dict(weights)
""",
            None,
        ),
        Invalid(
            """\
import os

import torch
import torch.nn as nn


def restore(folder):
    weights_file = os.path.join(folder, "net.pt")
    if not os.path.exists(weights_file):
        return None, None
    weights = torch.load(weights_file)
    return weights, os.path.getmtime(weights_file)


net = nn.Linear(4, 4).to("cuda")
weights, stamp = restore("runs/last")
net.load_state_dict(weights)
""",
            None,
        ),
        Invalid(
            """\
import torch


def tune(model, path):
    model.cuda()
    weights = torch.load(path)
    new_weights = {}
    for a, b in zip(list(model.state_dict()), list(weights)):
        new_weights[a] = weights[b]
    model.load_state_dict(new_weights)
""",
            None,
        ),
        Invalid(
            """\
import torch
from models import Embedding
def main(args, device):
    student = Embedding(args.dim, device=device)
    student.load_state_dict(torch.load(args.load))
    student = student.cuda()
""",
            """\
import torch
from models import Embedding
def main(args, device):
    student = Embedding(args.dim, device=device)
    student.load_state_dict(torch.load(args.load, map_location="cpu"))
    student = student.cuda()
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
def build(dim):
    return nn.Linear(dim, 2).cuda()
def main(path):
    net = build(4)
    net.load_state_dict(torch.load(path))
    net = net.cuda()
""",
            """\
import torch
import torch.nn as nn
def build(dim):
    return nn.Linear(dim, 2).cuda()
def main(path):
    net = build(4)
    net.load_state_dict(torch.load(path, map_location="cpu"))
    net = net.cuda()
""",
        ),
        Invalid(
            """\
import torch
from models import Net
from engine import Trainer
def main(path):
    net = Net()
    trainer = Trainer(net)
    net.load_state_dict(torch.load(path))
    net = net.cuda()
""",
            """\
import torch
from models import Net
from engine import Trainer
def main(path):
    net = Net()
    trainer = Trainer(net)
    net.load_state_dict(torch.load(path, map_location="cpu"))
    net = net.cuda()
""",
        ),
        Invalid(
            """\
import torch
def test(model, path=None):
    if path is not None:
        check_point = torch.load(path)
        state_dict = check_point["state_dict"]
        model.load_state_dict(state_dict)
""",
            None,
        ),
        Invalid(
            """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)


def restore(path, cpu=False):
    model = Net().to("cpu" if cpu else "cuda")
    if cpu:
        kwargs = {"map_location": "cpu"}
    else:
        kwargs = {}
    model.load_state_dict(torch.load(path, **kwargs))
    return model
""",
            None,  # adding the keyword would clash with the path whose ``kwargs`` holds it
        ),
        Invalid(
            """\
import argparse

import torch
import torch.nn as nn

PickClass = type("", (argparse.Action,), dict(__call__=lambda a, p, n, v, o: setattr(n, a.dest, a.choices[v])))


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)


class Large(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4).cuda()


parser = argparse.ArgumentParser()
parser.add_argument("--net", choices=dict(small=Small, large=Large), default=Large, action=PickClass)
parser.add_argument("--load")
opts = parser.parse_args()
model = opts.net()
model.load_state_dict(torch.load(opts.load))
model.cuda()
""",
            """\
import argparse

import torch
import torch.nn as nn

PickClass = type("", (argparse.Action,), dict(__call__=lambda a, p, n, v, o: setattr(n, a.dest, a.choices[v])))


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)


class Large(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4).cuda()


parser = argparse.ArgumentParser()
parser.add_argument("--net", choices=dict(small=Small, large=Large), default=Large, action=PickClass)
parser.add_argument("--load")
opts = parser.parse_args()
model = opts.net()
model.load_state_dict(torch.load(opts.load, map_location="cpu"))
model.cuda()
""",
        ),
        Invalid(
            """\
import numpy as np
import torch
import torch.nn as nn


def future_mask(n):
    return torch.from_numpy(np.triu(np.ones((1, n, n)), k=1)) == 0


class Captioner(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.fc = nn.Linear(opt.size, opt.size)

    def sample(self, probs, x):
        it = torch.multinomial(probs.cpu(), 1).cuda()
        mask = future_mask(x.size(1)).to(x.device)
        return self.fc(x * mask) + it

    def search(self, n, steps):
        table = [torch.zeros(steps, n).long() for _ in range(2)]
        for t in range(steps):
            for g in range(2):
                best = table[g][:, 0]
                it = table[g][t]
                self.fc(it.cuda().float())
        return best

    def to_gpu(self):
        self.fc.cuda()


def setup(opt):
    model = Captioner(opt)
    model.load_state_dict(torch.load(opt.start_from))
    return model


model = setup(OPTIONS)
model.cuda()
""",
            """\
import numpy as np
import torch
import torch.nn as nn


def future_mask(n):
    return torch.from_numpy(np.triu(np.ones((1, n, n)), k=1)) == 0


class Captioner(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.fc = nn.Linear(opt.size, opt.size)

    def sample(self, probs, x):
        it = torch.multinomial(probs.cpu(), 1).cuda()
        mask = future_mask(x.size(1)).to(x.device)
        return self.fc(x * mask) + it

    def search(self, n, steps):
        table = [torch.zeros(steps, n).long() for _ in range(2)]
        for t in range(steps):
            for g in range(2):
                best = table[g][:, 0]
                it = table[g][t]
                self.fc(it.cuda().float())
        return best

    def to_gpu(self):
        self.fc.cuda()


def setup(opt):
    model = Captioner(opt)
    model.load_state_dict(torch.load(opt.start_from, map_location="cpu"))
    return model


model = setup(OPTIONS)
model.cuda()
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)


def _init_nets(n, device="cpu"):
    nets = {i: None for i in range(n)}
    for i in range(n):
        net = Net()
        if device == "cpu":
            net.to(device)
        else:
            net = net.cuda()
        nets[i] = net
    return nets, n


def main(path):
    nets, n = _init_nets(3, device="cuda")
    global_model = nets[0]
    global_model.load_state_dict(torch.load(path))
""",
            """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)


def _init_nets(n, device="cpu"):
    nets = {i: None for i in range(n)}
    for i in range(n):
        net = Net()
        if device == "cpu":
            net.to(device)
        else:
            net = net.cuda()
        nets[i] = net
    return nets, n


def main(path):
    nets, n = _init_nets(3, device="cuda")
    global_model = nets[0]
    global_model.load_state_dict(torch.load(path, map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)


def _init_nets(n, device="cpu"):
    nets = {i: None for i in range(n)}
    for i in range(n):
        net = Net()
        if device == "cpu":
            net.to(device)
        else:
            net = net.cuda()
        nets[i] = net
    return nets, n


def main(path, device):
    nets, n = _init_nets(3, device=device)
    global_model = nets[0]
    global_model.load_state_dict(torch.load(path))
""",
            """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)


def _init_nets(n, device="cpu"):
    nets = {i: None for i in range(n)}
    for i in range(n):
        net = Net()
        if device == "cpu":
            net.to(device)
        else:
            net = net.cuda()
        nets[i] = net
    return nets, n


def main(path, device):
    nets, n = _init_nets(3, device=device)
    global_model = nets[0]
    global_model.load_state_dict(torch.load(path, map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)


def _init_nets(n, device="cpu"):
    nets = {i: None for i in range(n)}
    for i in range(n):
        net = Net()
        if device == "cpu":
            net.to(device)
        else:
            net = net.cuda()
        nets[i] = net
    return nets, n


def main(path):
    pool, n = _init_nets(3, device="cuda")
    nets, n = _init_nets(3)
    global_model = nets[0]
    global_model.load_state_dict(torch.load(path))
""",
            """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)


def _init_nets(n, device="cpu"):
    nets = {i: None for i in range(n)}
    for i in range(n):
        net = Net()
        if device == "cpu":
            net.to(device)
        else:
            net = net.cuda()
        nets[i] = net
    return nets, n


def main(path):
    pool, n = _init_nets(3, device="cuda")
    nets, n = _init_nets(3)
    global_model = nets[0]
    global_model.load_state_dict(torch.load(path, map_location="cpu"))
""",
        ),
    ]


class _DrawnLoads(list):
    """The loads a name holds through another value: bound to a key or a
    copying comprehension of one (``sd = ck["state_dict"]``), or merged
    into it (``model_dict.update(sd)``)."""


class _Moves(cst.CSTVisitor):
    """Whether ``receiver`` is moved to a device before ``until`` (None: anywhere):
    ``receiver.cuda()``, ``receiver.to(...)``, or a value holding such a call
    assigned to it (``model = nn.DataParallel(model).cuda()``)."""

    def __init__(
        self,
        receiver: str,
        until: cst.CSTNode | None,
        items: bool = False,
        builders: frozenset[str] = frozenset(),
        scope: cst.CSTNode | None = None,
        cpu_names: frozenset[str] = frozenset(),
    ) -> None:
        self.receiver = receiver
        self.cpu_names = cpu_names  # names holding the CPU device: ``.to(name)`` is no move (cpu_devices.py)
        self.until = until
        self.builders = builders  # project functions returning a model on a device, as called here
        self.items = items  # the receiver is a table of models: a move of any item counts
        self.scope = scope  # the scope walked: where an alias's source is looked up (None: not followed)
        self.moved = False
        self._done = False
        self._root: cst.CSTNode | None = None  # the node the walk starts at: its nested scopes are not walked

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._done or self.moved:
            return False
        if node is self.until:
            self._done = True
            return False
        if isinstance(node, _NESTED) and self._root is not None and node is not self._root:
            return False  # another scope: ``model.to(device)`` in a function defined above a script's load
        if self._root is None:
            self._root = node
        if (
            isinstance(node, cst.Call)
            and is_move(node)
            and not moves_to_cpu(node, self.cpu_names)
            and self._moves_receiver(node.func.value)  # type: ignore[attr-defined]
        ):
            self.moved = True
        elif isinstance(node, cst.Assign) and any(dotted_name(t.target) == self.receiver for t in node.targets):
            found = _AnyMove(self.cpu_names)
            visit_fast(node.value, found)
            self.moved = found.found or self._built_on_device(node.value) or self._alias_of_moved(node.value, node)
        return not self.moved

    def _alias_of_moved(self, value: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """``self.real_model = self.model`` after ``self.model =
        self.model.to(self.device)``, or ``pure = model.module if
        isinstance(model, DataParallel) else model`` after ``model.cuda()``:
        another name for a model moved before ``at`` (its wrapped ``.module``
        too), in every arm of a conditional."""
        if self.scope is None:
            return False
        if isinstance(value, cst.IfExp):
            return self._alias_of_moved(value.body, at) and self._alias_of_moved(value.orelse, at)
        source = dotted_name(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
        if source and source.endswith(".module"):
            source = source[: -len(".module")]
        if not source or source == self.receiver:
            return False
        # One step back: the source's own aliases are not followed (no chain, no cycle).
        moves = _Moves(source, at, builders=self.builders, cpu_names=self.cpu_names)
        visit_fast(self.scope, moves)
        return moves.moved

    def _built_on_device(self, value: cst.BaseExpression) -> bool:
        """A call of a project function returning a model it moved to a
        device (``define_tsnet(name, cuda=args.cuda)``), handed no literal
        ``False``/``None``/``0`` (``cuda=False`` may keep it on the CPU)."""
        if not (isinstance(value, cst.Call) and (dotted_name(value.func) or "") in self.builders):
            return False
        return not any(
            isinstance(a.value, cst.Name)
            and a.value.value in ("False", "None")
            or isinstance(a.value, cst.Integer)
            and a.value.value == "0"
            for a in value.args
        )

    def _moves_receiver(self, moved: cst.BaseExpression) -> bool:
        if self.items and isinstance(moved, cst.Subscript):
            return dotted_name(moved.value) == self.receiver
        return dotted_name(moved) == self.receiver


# Scopes of their own inside the one walked: their code runs when called, not in place.
_NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


class _AnyMove(cst.CSTVisitor):
    def __init__(self, cpu_names: frozenset[str] = frozenset()) -> None:
        self.found = False
        self.cpu_names = cpu_names

    def visit_Call(self, node: cst.Call) -> None:
        self.found = self.found or (is_move(node) and not moves_to_cpu(node, self.cpu_names))


class _ReturnedLoads(cst.CSTVisitor):
    """Per function, the loads it returns: ``return torch.load(f)``, or
    ``return ckpt`` where the function binds ``ckpt`` only to such loads
    (``ckpt = torch.load(f)``), to keys of them or to names that are
    (``sd = ckpt["state_dict"]``). A load with ``map_location`` may be returned
    beside them (``if use_cuda: ckpt = torch.load(p) else: ckpt =
    torch.load(p, map_location=...)``): the unmapped one is still returned
    where it runs; ``return None`` returns no tensors. A function whose every
    return is a tuple of one length (``return epoch, state_dict``) returns,
    at a position, the loads each return holds there (``items``). Nested
    functions are their own."""

    def __init__(self, is_load, is_any_load) -> None:
        self.is_load = is_load
        self.is_any_load = is_any_load  # any torch.load: a mapped one copies nothing to a GPU
        self.found: dict[cst.FunctionDef, list[cst.Call]] = {}
        # Functions returning tuples: position -> the loads held there.
        self.items: dict[cst.FunctionDef, dict[int, list[cst.Call]]] = {}
        # Per function: its bindings, each a load, the name it is drawn from, or None (anything else).
        self._stack: list[tuple[cst.FunctionDef, dict[str, list[cst.Call | str | None]], list[cst.BaseExpression]]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._stack.append((node, {}, []))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        fn, bound, returned = self._stack.pop()
        if returned and all(_plain_tuple(value) for value in returned):
            self._tuple_items(fn, bound, returned)
            return
        loads: list[cst.Call] = []
        for value in returned:
            held = self._value_loads(value, bound)
            if held is None:
                return  # another value may be returned: its callers are not told what
            loads.extend(held)
        self.found[fn] = loads

    def _tuple_items(self, fn: cst.FunctionDef, bound: dict, returned: list[cst.BaseExpression]) -> None:
        tuples = [value for value in returned if isinstance(value, cst.Tuple)]
        length = len(tuples[0].elements)
        if any(len(t.elements) != length for t in tuples):
            return
        items: dict[int, list[cst.Call]] = {}
        for i in range(length):
            loads: list[cst.Call] = []
            for t in tuples:
                held = self._value_loads(t.elements[i].value, bound)
                if held is None:
                    break
                loads.extend(held)
            else:
                if loads:
                    items[i] = loads
        if items:
            self.items[fn] = items

    def _value_loads(self, value: cst.BaseExpression, bound: dict) -> list[cst.Call] | None:
        """The loads ``value`` returns (a key of one is the same tensors),
        [] for a mapped load, None for anything else."""
        value = _keyed(value)
        if isinstance(value, cst.Name) and value.value == "None":
            return []  # ``return None, None, None`` for a missing checkpoint: no tensors there
        if isinstance(value, cst.Call) and self.is_load(value):
            return [value]
        if isinstance(value, cst.Call) and self.is_any_load(value):
            return []
        if isinstance(value, cst.Name):
            return _bound_loads(value.value, bound, set())
        return None

    def visit_Assign(self, node: cst.Assign) -> None:
        if not self._stack:
            return
        bound = self._stack[-1][1]
        value = _keyed(node.value)
        entry: cst.Call | str | None = None
        if isinstance(value, cst.Call) and self.is_load(value):
            entry = value
        elif isinstance(value, cst.Call) and self.is_any_load(value):
            return  # a mapped load: nothing for the callers, nothing against the others
        elif isinstance(value, cst.Name):
            entry = value.value  # ``state_dict = weights``: what ``weights`` holds
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                bound.setdefault(target.target.value, []).append(entry)

    def visit_Return(self, node: cst.Return) -> None:
        # ``return None`` hands back no tensors, as a bare ``return`` (a
        # missing checkpoint): the callers test for it before loading.
        if (
            self._stack
            and node.value is not None
            and not (isinstance(node.value, cst.Name) and node.value.value == "None")
        ):
            self._stack[-1][2].append(node.value)


def _keyed(value: cst.BaseExpression) -> cst.BaseExpression:
    """``value`` without the keys looked up in it (``ck["state_dict"]``,
    ``ck.get("model")``): the same tensors."""
    while True:
        if isinstance(value, cst.Subscript):
            value = value.value
        elif is_get(value):
            assert isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            value = value.func.value
        else:
            return value


def _plain_tuple(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Tuple) and not any(isinstance(e, cst.StarredElement) for e in value.elements)


def _bound_loads(name: str, bound: dict[str, list[cst.Call | str | None]], seen: set[str]) -> list[cst.Call] | None:
    """The loads every binding of ``name`` holds; None when one holds anything else."""
    entries = bound.get(name)
    if not entries or name in seen:
        return None
    loads: list[cst.Call] = []
    for entry in entries:
        if entry is None:
            return None
        if isinstance(entry, str):
            held = _bound_loads(entry, bound, seen | {name})
            if held is None:
                return None
            loads.extend(held)
        else:
            loads.append(entry)
    return loads


class _Strings(cst.CSTVisitor):
    """The checkpoint file names spelled in an expression, and the dotted names it reads."""

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.names: set[str] = set()

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        named = file_name(node.evaluated_value)
        if named:
            self.files.add(named)

    def visit_FormattedString(self, node: cst.FormattedString) -> bool:
        # ``f"{a}_{b}.pkl"``: the pattern ``*_*.pkl``, as checkpoint_files.py's ``_template``.
        spelled = "".join(
            part.value.replace("*", "") if isinstance(part, cst.FormattedStringText) else "*" for part in node.parts
        )
        named = file_name(spelled)
        if named:
            self.files.add(named)
        return True

    def visit_Call(self, node: cst.Call) -> bool:
        # ``"{}_{}.pkl".format(a, b)``: the pattern ``*_*.pkl``; the arguments are read on.
        func = node.func
        if not (
            isinstance(func, cst.Attribute) and func.attr.value == "format" and isinstance(func.value, cst.SimpleString)
        ):
            return True
        template = func.value.evaluated_value
        if isinstance(template, str):
            named = file_name(re.sub(r"\{[^{}]*\}", "*", template.replace("*", "")))
            if named:
                self.files.add(named)
        for arg in node.args:
            arg.visit(self)
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        spelled = dotted_name(node)
        if spelled:
            self.names.add(spelled)
        return True


class _Bound(cst.CSTVisitor):
    """The checkpoint file names in every value a scope binds to one of ``names``."""

    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.files: set[str] = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(dotted_name(t.target) in self.names for t in node.targets):
            strings = _Strings()
            visit_fast(node.value, strings)
            self.files |= strings.files
