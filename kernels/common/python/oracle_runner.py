"""The trusted runner of a task's Python reference (evoteam eval --oracle).

    python oracle_runner.py --probe        prints {"python", "numpy", "torch", "torch_cuda", ...} as JSON
    python oracle_runner.py MANIFEST       runs the reference on every trial the manifest lists

The manifest (written by evoteam) names the reference module, its function, the framework (numpy or torch), the
torch device, and per trial the keyword arguments (axes and scalars), the input files and the output files, each
with dtype and shape. Tensors are raw little-endian files; bfloat16 and float8 are raw bits, which only torch
reads. Each output of the function (one array, a tuple in the task's output order, or a dict by name) is checked
against its declared shape and written in its declared dtype.

On success it prints {"device": "cuda"|"cpu"} (where the reference ran). Exit codes: 0 done; 2 the reference failed (one line on stderr says which trial and why); 3 the framework is not
importable (the oracle is skipped, not failed).
"""
import importlib.util
import inspect
import json
import sys
import traceback

NUMPY_DTYPES = {"float32": "float32", "float64": "float64", "float16": "float16", "int32": "int32",
                "int64": "int64", "uint8": "uint8"}
# dtypes numpy cannot hold: read and written as raw bits of this width, viewed as the torch dtype.
TORCH_BIT_DTYPES = {"bfloat16": ("int16", "bfloat16"), "float8_e4m3": ("uint8", "float8_e4m3fn"),
                    "float8_e5m2": ("uint8", "float8_e5m2")}


class OracleError(Exception):
    pass


def probe():
    report = {"python": sys.executable, "version": sys.version.split()[0], "numpy": None, "torch": None,
              "torch_cuda": False}
    try:
        import numpy
        report["numpy"] = numpy.__version__
    except Exception as error:  # an import can fail in many ways (missing libs, ABI mismatches)
        report["numpy_error"] = f"{type(error).__name__}: {error}"
    try:
        import torch
        report["torch"] = torch.__version__
        report["torch_cuda"] = bool(torch.cuda.is_available())
    except Exception as error:
        report["torch_error"] = f"{type(error).__name__}: {error}"
    print(json.dumps(report))
    return 0


def import_framework(name):
    try:
        import numpy
        torch = None
        if name == "torch":
            import torch
        return numpy, torch
    except Exception as error:
        print(f"{name} is not importable by {sys.executable}: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(3)


def load_function(path, function):
    spec = importlib.util.spec_from_file_location("evoteam_python_reference", path)
    if spec is None or spec.loader is None:
        raise OracleError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        raise OracleError(f"importing {path} failed: {type(error).__name__}: {error}") from error
    found = getattr(module, function, None)
    if not callable(found):
        raise OracleError(f"{path} defines no function {function}()")
    return found


def read_tensor(spec, numpy, torch, device):
    dtype = spec["dtype"]
    shape = tuple(spec["shape"])
    if dtype in TORCH_BIT_DTYPES:
        if torch is None:
            raise OracleError(f"input {spec['name']} is {dtype}, which numpy cannot hold (use the torch framework)")
        bits, torch_dtype = TORCH_BIT_DTYPES[dtype]
        array = numpy.fromfile(spec["file"], dtype=bits)
        tensor = torch.from_numpy(array).view(getattr(torch, torch_dtype))
    else:
        array = numpy.fromfile(spec["file"], dtype=NUMPY_DTYPES[dtype])
        tensor = array if torch is None else torch.from_numpy(array)
    count = 1
    for size in shape:
        count *= size
    if tensor.shape[0] != count:
        raise OracleError(f"input file {spec['file']} holds {tensor.shape[0]} elements, expected {count}")
    tensor = tensor.reshape(shape)
    return tensor if torch is None else tensor.to(device)


def outputs_by_name(returned, specs):
    names = [spec["name"] for spec in specs]
    if isinstance(returned, dict):
        missing = [name for name in names if name not in returned]
        if missing:
            raise OracleError(f"the returned dict lacks output(s) {', '.join(missing)}")
        return {name: returned[name] for name in names}
    if not isinstance(returned, (tuple, list)):
        returned = (returned,)
    if len(returned) != len(names):
        raise OracleError(f"returned {len(returned)} value(s), expected {len(names)} ({', '.join(names)})")
    return dict(zip(names, returned))


def write_tensor(value, spec, numpy, torch):
    dtype = spec["dtype"]
    shape = tuple(spec["shape"])
    if torch is not None and isinstance(value, torch.Tensor):
        if tuple(value.shape) != shape:
            raise OracleError(f"output {spec['name']} has shape {tuple(value.shape)}, expected {shape}")
        value = value.detach().to("cpu")
        if dtype in TORCH_BIT_DTYPES:
            bits, torch_dtype = TORCH_BIT_DTYPES[dtype]
            array = value.to(getattr(torch, torch_dtype)).contiguous().view(getattr(torch, bits)).numpy()
        else:
            array = value.to(getattr(torch, NUMPY_DTYPES[dtype])).contiguous().numpy()
    else:
        if dtype in TORCH_BIT_DTYPES:
            raise OracleError(f"output {spec['name']} is {dtype}: return a torch tensor")
        array = numpy.asarray(value)
        if tuple(array.shape) != shape:
            raise OracleError(f"output {spec['name']} has shape {tuple(array.shape)}, expected {shape}")
        array = numpy.ascontiguousarray(array, dtype=NUMPY_DTYPES[dtype])
    array.astype(array.dtype.newbyteorder("<"), copy=False).tofile(spec["file"])


def keyword_arguments(function, available):
    """The arguments `function` takes, by name; a required one the task does not have is an error."""
    parameters = inspect.signature(function).parameters
    if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return dict(available)
    chosen = {}
    for name, parameter in parameters.items():
        if name in available:
            chosen[name] = available[name]
        elif parameter.default is inspect.Parameter.empty and parameter.kind != inspect.Parameter.VAR_POSITIONAL:
            raise OracleError(f"{function.__name__}() needs argument {name}, which is neither an input, an axis "
                              f"nor a scalar of the task")
    return chosen


def run_trial(function, trial, numpy, torch, device):
    available = dict(trial["kwargs"])
    for spec in trial["inputs"]:
        available[spec["name"]] = read_tensor(spec, numpy, torch, device)
    arguments = keyword_arguments(function, available)
    try:
        if torch is not None:
            with torch.no_grad():
                returned = function(**arguments)
        else:
            returned = function(**arguments)
    except Exception as error:
        where = traceback.extract_tb(error.__traceback__)[-1]
        raise OracleError(f"{function.__name__}() raised {type(error).__name__}: {error} "
                          f"(line {where.lineno} of {where.filename})") from error
    for name, value in outputs_by_name(returned, trial["outputs"]).items():
        spec = next(spec for spec in trial["outputs"] if spec["name"] == name)
        write_tensor(value, spec, numpy, torch)


def main(argv):
    if len(argv) == 2 and argv[1] == "--probe":
        return probe()
    if len(argv) != 2:
        print("usage: oracle_runner.py --probe | MANIFEST", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as file:
        manifest = json.load(file)
    numpy, torch = import_framework(manifest["framework"])
    device = manifest.get("device", "cpu")
    if torch is not None and device == "cuda" and not torch.cuda.is_available():
        device = "cpu"
    trial_id = None
    try:
        function = load_function(manifest["module"], manifest["function"])
        for trial in manifest["trials"]:
            trial_id = trial["id"]
            run_trial(function, trial, numpy, torch, device)
    except OracleError as error:
        prefix = "" if trial_id is None else f"trial {trial_id}: "
        print(f"{prefix}{error}", file=sys.stderr)
        return 2
    # Where the reference ran: a torch reference of a cuda task falls back to the CPU without a usable GPU.
    print(json.dumps({"device": device if torch is not None else "cpu"}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
