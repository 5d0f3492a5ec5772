"""Readers of what JAX hands back: the jaxpr, the StableHLO, the compiled HLO.

What a slide shows (show.py) and what a picture draws is read here, once: the HLO without its
location tables, the top-level ops of @main and of ENTRY, the collectives and their device
groups, the names the jaxpr printer gives, a jaxpr laid out as columns of equations, and where
vmap keeps each value's batch dimension. A lab's checks keep their own readers, independent of
these (in lab J4 the attendee writes one); J4 shares only the collectives' names.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# --------------------------------------------------------------------------- HLO and StableHLO

_HLO_TABLES = re.compile(r"^(FileNames|FunctionNames|FileLocations|StackFrames)$")
_HLO_META = re.compile(r", metadata=\{[^{}]*\}")
_MAIN_OP = re.compile(r'^    (?:%[\w#:]+(?:, %[\w#:]+)* = )?"?((?:\w+\.)+\w+|call)(?: (@\w+))?')
_HLO_OP = re.compile(r"^\s*(?:ROOT )?%([\w.\-]+) = (?:\([^()]*\)|\S+) ([a-z][\w\-]*)\(")


def hlo_text(compiled) -> tuple[str, list[str]]:
    """The compiled HLO without its source-location tables and metadata attributes."""
    out, notes, skipping, dropped = [], [], False, 0
    for line in compiled.as_text().split("\n"):
        if _HLO_TABLES.match(line):
            skipping = True
            continue
        if skipping:
            if line.strip() == "" or line.startswith(" ") or line[:1].isdigit():
                dropped += 1
                continue
            skipping = False
        out.append(line)
    text = "\n".join(out)
    text, n_meta = _HLO_META.subn("", text)
    if dropped:
        notes.append(f"{dropped} location-table lines")
    if n_meta:
        notes.append(f"metadata of {n_meta} ops")
    text = re.sub(r"\n{3,}", "\n\n", text).strip("\n")
    return text, notes


def stablehlo_ops(lowered) -> list[str]:
    """The top-level ops of the entry function @main, in order, `return` left out: ops
    nested in a region (a while body) are not listed; stablehlo. is dropped from the names,
    other dialects keep theirs (chlo.erf), a call names its callee (call @argmax)."""
    text = lowered.as_text()
    main = text.split("func.func public @main", 1)[1].split("\n  }\n", 1)[0]
    ops = []
    for line in main.split("\n")[1:]:
        m = _MAIN_OP.match(line)
        if not m or m.group(1).endswith("return"):
            continue
        op = m.group(1).removeprefix("stablehlo.").removeprefix("func.")
        ops.append(f"{op} {m.group(2)}" if op == "call" and m.group(2) else op)
    return ops


def hlo_entry(compiled) -> list[tuple[str, str]]:
    """(name, opcode) of each instruction of the compiled ENTRY, in order, parameters
    included. XLA names a loop fusion after what it fused: tanh_reduce_fusion."""
    text, _ = hlo_text(compiled)
    entry = text.split("\nENTRY ", 1)[1].split("\n}", 1)[0]
    return [m.groups() for line in entry.split("\n")[1:] if (m := _HLO_OP.match(line))]


# --------------------------------------------------------------------------- collectives

# the HLO opcodes of the collectives (lab J4's answers name them too); all but the last say
# which devices combine in replica_groups=, a collective-permute names source-target pairs
COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")
GROUPED = COLLECTIVES[:-1]
_REPLICA_GROUPS = re.compile(r"replica_groups=(\{\{[\d,{}]*\}\}|\[[\d,]+\]<=\[[\d,]+\]"
                             r"(?:T\([\d,]+\))?|mesh\[[^\]]*\](?:, device_ids=\([^()]*"
                             r"(?:\([\d,]*\))?\))? \{[^}]*\})")


def _arranged(ids, dims: list[int], perm: str | None):
    """`ids` in the shape `dims`, transposed by `perm` ("1,0") if given."""
    ids = ids.reshape(dims)
    return ids.transpose([int(p) for p in perm.split(",")]) if perm else ids


def _ints(text: str) -> list[int]:
    return [int(k) for k in text.split(",")]


def _mesh_groups(text: str) -> list[list[int]]:
    """The groups of the mesh-axes form: the devices that differ only along the named axes."""
    import numpy as np

    m = re.fullmatch(r"mesh\[([^\]]*)\](?:, device_ids=\((.*)\))? \{([^}]*)\}", text)
    axes = re.findall(r"'(\w+)'=(\d+)", m.group(1))
    names, sizes = [a for a, _ in axes], [int(s) for _, s in axes]
    over = [names.index(a) for a in re.findall(r"'(\w+)'", m.group(3))]
    rest = [i for i in range(len(names)) if i not in over]
    ids = np.arange(int(np.prod(sizes)))
    if m.group(2):                 # the device ids, in mesh order: an iota, maybe transposed
        d = re.fullmatch(r"\[([\d,]+)\](?:T\(([\d,]+)\))?", m.group(2))
        ids = _arranged(ids, _ints(d.group(1)), d.group(2))
    ids = ids.reshape(sizes).transpose(rest + over)
    return ids.reshape(-1, int(np.prod([sizes[i] for i in over]))).tolist()


def replica_groups(text: str) -> list[list[int]]:
    """The device groups of one replica_groups= value, in any of the three forms the
    compiled HLO writes: {{0,4},{1,5}}, an iota [4,2]<=[2,4]T(1,0), or the mesh-axes form
    mesh['x'=2,'y'=4] {'x'} (XLA on 0.12 writes the mesh's own axis names; optionally with
    device_ids=([2,4]T(1,0)), the ids in mesh order). Ids are logical: positions in the
    device assignment."""
    import numpy as np

    if text.startswith("{{"):
        return [[int(i) for i in g.split(",") if i] for g in text[2:-2].split("},{")]
    if text.startswith("["):
        m = re.fullmatch(r"\[([\d,]+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?", text)
        shape, dims = _ints(m.group(1)), _ints(m.group(2))
        ids = _arranged(np.arange(int(np.prod(dims))), dims, m.group(3))
        return ids.reshape(shape).tolist()
    return _mesh_groups(text)


def collective_groups(compiled) -> tuple[list[tuple[str, list[list[int]]]], list[str]]:
    """Each collective of the compiled HLO (an async one by its -start) that names groups, in
    order, as (kind, groups); and, sorted, the kinds that name none (a collective-permute)."""
    found, left = [], []
    for line in hlo_text(compiled)[0].split("\n"):
        m = _HLO_OP.match(line)
        kind = m and m.group(2).removesuffix("-start")
        if kind not in COLLECTIVES:
            continue
        groups = _REPLICA_GROUPS.search(line) if kind in GROUPED else None
        if groups:
            found.append((kind, replica_groups(groups.group(1))))
        else:
            left.append(kind)
    return found, sorted(set(left))


# --------------------------------------------------------------------------- jaxprs

def printer_names(jaxpr) -> dict:
    """Var -> the name `str(jaxpr)` gives it. Read from the printer's own naming context
    (unused results are _, names in nested and shared jaxprs are counted), by watching
    core.pp_toplevel_jaxpr create it while it prints."""
    from jax._src import core

    made = []
    real = core.JaxprPpContext

    class Watched(real):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            made.append(self)

    core.JaxprPpContext = Watched
    try:
        jaxpr.pretty_print()
    finally:
        core.JaxprPpContext = real
    return made[0].var_names


@dataclass
class JaxprGraph:
    """A jaxpr as columns of boxes: its inputs, each equation in the column after the last one
    it reads from, its outputs. A box is (title, lines, vars it reads); an edge is
    ((column, row) from, (column, row) to, the variable's printed name, crosses the cut)."""
    columns: list = field(default_factory=lambda: [[]])
    edges: list = field(default_factory=list)
    late: dict = field(default_factory=dict)       # (column, row) -> unknown until later?
    known: list = field(default_factory=list)      # partial eval's known equations
    unknown: list = field(default_factory=list)
    residuals: list = field(default_factory=list)  # the Vars that cross the cut
    names: dict = field(default_factory=dict)      # Var -> printed name

    @property
    def out_col(self) -> int:
        return len(self.columns) - 1


class _Reading:
    """Walks a jaxpr once, filling a JaxprGraph: where each Var is drawn, and whether
    partial evaluation knows it yet."""

    def __init__(self, inner, unknowns, inline_consts: bool, rename: dict | None):
        self.inner = inner
        self.g = JaxprGraph(names={**printer_names(inner), **(rename or {})})
        self.inline = set(inner.constvars) if inline_consts else set()
        self.col: dict = {}        # Var -> column of the box that defines it
        self.place: dict = {}      # Var -> (column, row)
        self.unk: dict = {}        # Var -> unknown until later?
        self.bits = [False] * len(inner.constvars) + list(unknowns or [False] * len(inner.invars))

    def name(self, v) -> str:
        return self.g.names[v]

    @staticmethod
    def lit(x) -> str:
        return x.pretty_print(None, print_dtype=False)

    @staticmethod
    def typ(v) -> str:
        return ("~" if v.aval.weak_type else "") + v.aval.str_short(short_dtypes=True)

    def inputs(self) -> None:
        """The consts (unless inlined) and the arguments, named after the function's own."""
        inner = self.inner
        args = list(getattr(inner.debug_info, "arg_names", None) or [])
        for i, v in enumerate(list(inner.constvars) + list(inner.invars)):
            self.unk[v] = self.bits[i]
            if v in self.inline:
                continue
            k = i - len(inner.constvars)
            arg = "const" if k < 0 else args[k] if k < len(args) else "arg"
            self.col[v] = 0
            self.place[v] = (0, len(self.g.columns[0]))
            self.g.late[self.place[v]] = self.bits[i]
            self.g.columns[0].append((self.name(v), [f"{arg}: {self.typ(v)}"], []))

    def title(self, eqn, ins: list) -> str:
        """The primitive, with its literals and inlined consts written in: add(·, 2.0)."""
        from jax._src import core

        if len(ins) == len(eqn.invars):
            return eqn.primitive.name
        return eqn.primitive.name + "(" + ", ".join(
            self.lit(x) if isinstance(x, core.Literal) else self.name(x) if x in self.inline
            else "·" for x in eqn.invars) + ")"

    def equation(self, eqn) -> None:
        from jax._src import core

        g = self.g
        ins = [x for x in eqn.invars if not isinstance(x, core.Literal) and x not in self.inline]
        c = 1 + max((self.col[x] for x in ins), default=0)
        while len(g.columns) <= c:
            g.columns.append([])
        outs = [o for o in eqn.outvars if not isinstance(o, core.DropVar)]
        lines = [", ".join(f"{self.name(o)}: {self.typ(o)}" for o in outs) or "_"]
        row = len(g.columns[c])
        g.columns[c].append((self.title(eqn, ins), lines, ins))
        reads = [x for x in eqn.invars if not isinstance(x, core.Literal)]
        u = any(self.unk[x] for x in reads)
        g.late[(c, row)] = u
        (g.unknown if u else g.known).append(eqn.primitive.name)
        self.arrows(reads, (c, row), u)
        self.unk.update((o, u) for o in eqn.outvars)
        for o in outs:
            self.col[o], self.place[o] = c, (c, row)

    def arrows(self, reads: list, to: tuple, late: bool) -> None:
        """An edge from each drawn Var a box reads; a known Var read by an unknown equation
        is a residual, its edge crossing the cut."""
        g = self.g
        for x in reads:
            crossing = late and not self.unk[x]
            if crossing and x not in g.residuals:
                g.residuals.append(x)
            if x in self.place:
                g.edges.append((self.place[x], to, self.name(x), crossing))

    def outputs(self) -> None:
        from jax._src import core

        g = self.g
        out_col = len(g.columns)
        g.columns.append([])
        for o in self.inner.outvars:
            row = len(g.columns[out_col])
            if isinstance(o, core.Literal) or o not in self.place:
                g.columns[out_col].append(("out", [self.lit(o) if isinstance(o, core.Literal)
                                                   else self.name(o)], []))
                continue
            g.columns[out_col].append(("out", [self.name(o)], [o]))
            g.late[(out_col, row)] = self.unk[o]
            g.edges.append((self.place[o], (out_col, row), self.name(o), False))


def jaxpr_graph(inner, unknowns=None, inline_consts: bool = False,
                rename: dict | None = None) -> JaxprGraph:
    """Lay `inner`'s equations out in columns: inputs first, each equation in the column after
    the last one it reads from, the outputs last. `unknowns` marks partial evaluation's
    unknown inputs (the consts are known); `inline_consts` writes the consts into the boxes
    that read them, by name, as literals are, instead of drawing them as inputs; `rename`
    overrides the printer's name of some Vars."""
    reading = _Reading(inner, unknowns, inline_consts, rename)
    reading.inputs()
    for eqn in inner.eqns:
        reading.equation(eqn)
    reading.outputs()
    return reading.g


def check_split(jaxpr, unknowns, g: JaxprGraph) -> None:
    """Raise unless partial_eval_jaxpr_nounits splits `jaxpr` as `g` says (the primitives on
    each side, the number of residuals)."""
    from jax._src.interpreters import partial_eval as pe

    known, unknown, _, res = pe.partial_eval_jaxpr_nounits(jaxpr, unknowns=list(unknowns),
                                                           instantiate=False)
    said = ([e.primitive.name for e in known.eqns], [e.primitive.name for e in unknown.eqns],
            len(res))
    drew = (g.known, g.unknown, len(g.residuals))
    if said != drew:
        raise ValueError(f"partial evaluation splits this jaxpr as {said} (known, unknown, "
                         f"residuals), not as drawn {drew}")


def batch_dims(f, args, in_axes):
    """Run make_jaxpr(f)'s equations one by one under jax.vmap(…, in_axes) and read where each
    value's batch dimension sits (a BatchTracer's batch_dim; None: not batched). Returns the
    jaxpr of one example and, first for its inputs ("in"), then per equation: (primitive,
    the inputs' batch dims, the outputs', the outputs' avals)."""
    import jax
    from jax._src import core

    one = [a if ax is None else jax.numpy.take(a, 0, axis=ax) for a, ax in zip(args, in_axes)]
    closed = jax.make_jaxpr(f)(*one)
    seen = []

    def run(*vals):
        env = dict(zip(closed.jaxpr.constvars, closed.consts))
        env.update(zip(closed.jaxpr.invars, vals))
        read = lambda v: v.val if isinstance(v, core.Literal) else env[v]
        bdim = lambda x: getattr(x, "batch_dim", None)
        seen.append(("in", [], [bdim(v) for v in vals],
                     [v.aval for v in closed.jaxpr.invars]))
        for eqn in closed.eqns:
            ins = [read(v) for v in eqn.invars]
            with eqn.ctx.manager:  # as core.eval_jaxpr binds: a cond, a jit, a custom_jvp
                outs = eqn.primitive.bind(*ins, **eqn.primitive.get_bind_params(eqn.params))
            outs = outs if eqn.primitive.multiple_results else [outs]
            seen.append((eqn.primitive.name, [bdim(x) for x in ins], [bdim(o) for o in outs],
                         [v.aval for v in eqn.outvars]))
            env.update(zip(eqn.outvars, outs))
        return [read(v) for v in closed.jaxpr.outvars]

    jax.vmap(run, in_axes=tuple(in_axes))(*args)
    return closed, seen
