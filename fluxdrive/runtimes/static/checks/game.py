"""fd-game-design checks: frame-rate dependence, unreplayable randomness, buried tuning values.

Game code is recognised by its shape: per-frame functions (``update``,
``tick``, ``step``...), ``while running:`` loops that drive a clock, imports
of a game library, or a path under ``game/``, ``sim/``, ``world/``,
``level/`` or ``procgen/``. :func:`tuning_regions` is shared with the
quality checks so a literal in a game loop is reported once, by this area.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks._common import (
    Function,
    clip,
    example_lines,
    in_arithmetic,
    literal_exempt,
    numeric_literal,
    walk_function,
)
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, python_check
from fluxdrive.runtimes.static.checks.engine.syntax import call_name

_FRAME_FUNCTIONS = {"update", "tick", "step", "on_update", "process", "_process"}
_FRAME_FUNCTIONS |= {"_physics_process"}
_TUNING_FUNCTIONS = _FRAME_FUNCTIONS - {"process"} | {"fixed_update"}
_DT = re.compile(
    r"(?:\w+_)?(?:dt|delta|delta_?time|elapsed|elapsed_?time|frame_?time|time_?delta|time_?step)"
    r"(?:_\w+)?",
    re.IGNORECASE,
)
_MOTION = re.compile(r"[xyz]|v[xyz]|pos(?:ition)?(?:_?[xyz])?|vel(?:ocity)?(?:_?[xyz])?|speed|angle|rotation")
_GAME_LIBS = {"pygame", "arcade", "pyglet", "panda3d", "ursina", "pyray", "raylib", "pymunk"}
_GAME_PATH = {"sim", "sims", "simulation", "simulator", "world", "worlds", "level", "levels"}
_LOOP_FLAGS = re.compile(r"(?:is_|game_)?(running|run|alive|playing|game_over|done|quit|exit|finished)")
_TRIVIAL = {0, 1, -1, 2, 0.5}


def _mentions_dt(node: ast.AST) -> bool:
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and _DT.fullmatch(child.id):
            return True
        if isinstance(child, ast.Attribute) and _DT.fullmatch(child.attr):
            return True
        if isinstance(child, ast.arg) and _DT.fullmatch(child.arg):
            return True
    return False


def _has_dt_param(function: Function) -> bool:
    args = function.args
    return any(_DT.fullmatch(a.arg) for a in [*args.posonlyargs, *args.args, *args.kwonlyargs])


def game_module(module: PyModule) -> bool:
    """True when the file imports a game library or lives under a game-ish folder."""
    tokens = re.split(r"[/_.\-]", module.local_path.lower())
    if any(t in _GAME_PATH or "game" in t or t.startswith("procgen") for t in tokens):
        return True
    for node in module.of_type(ast.Import, ast.ImportFrom):
        if isinstance(node, ast.Import):
            roots = [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            roots = [node.module.split(".")[0]]
        else:
            continue
        if any(root in _GAME_LIBS for root in roots):
            return True
    return False


def _drives_clock(loop: ast.While) -> bool:
    for node in ast.walk(loop):
        if isinstance(node, ast.Call):
            name = call_name(node)
            if name.endswith(("clock.tick", "display.flip", "display.update")):
                return True
    return False


def _loop_flag(test: ast.expr) -> bool:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", "")
    return bool(_LOOP_FLAGS.fullmatch(str(name).lower().lstrip("_")))


def tuning_regions(module: PyModule) -> list[ast.AST]:
    """Per-frame functions and game loops whose literals are tuning values."""
    candidates = [
        n
        for n in module.of_type(ast.While, ast.FunctionDef, ast.AsyncFunctionDef)
        if isinstance(n, ast.While)
        or (isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name in _TUNING_FUNCTIONS)
    ]
    game = bool(candidates) and game_module(module)
    regions: list[ast.AST] = []
    for node in candidates:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            wanted = game or _has_dt_param(node)
        elif isinstance(node, ast.While):
            wanted = _drives_clock(node) or (game and _loop_flag(node.test))
        else:
            continue
        if wanted:
            regions.append(node)
    return regions


def _short(expr: ast.AST, limit: int = 30) -> str:
    return clip(ast.unparse(expr), limit, "...")


def _format(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else repr(value)


# --------------------------------------------------------------------------
# py-frame-dependent-update


def _motion_target(target: ast.expr) -> str | None:
    base = target.value if isinstance(target, ast.Subscript) else target
    if isinstance(base, ast.Attribute) and _MOTION.fullmatch(base.attr):
        return _short(target)
    return None


def _one_cell(value: ast.expr) -> bool:
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        value = value.operand
    return isinstance(value, ast.Constant) and value.value == 1


@python_check(
    "py-frame-dependent-update",
    tag="game-design",
    severity="P2",
    summary="Position/velocity changed by a fixed amount per frame in update/tick/step (no dt)",
    match=[
        example_lines(
            "class Player:",
            "    def update(self):",
            "        self.x += self.speed",
            "        self.y -= 3",
        ),
        example_lines(
            "class Ship:",
            "    def tick(self, keys):",
            "        if keys.left:",
            "            self.angle += 5",
        ),
        example_lines(
            "def update(enemies):",
            "    for e in enemies:",
            "        e.position += e.velocity",
        ),
    ],
    no_match=[
        example_lines(
            "class Player:",
            "    def update(self, dt):",
            "        self.x += self.speed * dt",
        ),
        example_lines(
            "class Ship:",
            "    def tick(self, keys, delta_time):",
            "        if keys.left:",
            "            self.angle += self.turn_rate * delta_time",
        ),
        example_lines(
            "class Stats:",
            "    def update(self, row):",
            "        self.count += 1",
            "        self.total += row.value",
        ),
    ],
)
def frame_dependent_update(module: PyModule) -> Iterator[CheckHit]:
    for function in module.function_defs:
        if function.name not in _FRAME_FUNCTIONS or _mentions_dt(function):
            continue
        for node in walk_function(function):
            if not isinstance(node, ast.AugAssign):
                continue
            if not isinstance(node.op, ast.Add | ast.Sub | ast.Mult):
                continue
            target = _motion_target(node.target)
            value = node.value
            if target is None or (isinstance(value, ast.Constant) and value.value == 0):
                continue
            if function.name in {"step", "tick"} and _one_cell(value):
                continue  # a turn-based step moves one cell, not a per-frame amount
            op = {ast.Add: "+=", ast.Sub: "-=", ast.Mult: "*="}[type(node.op)]
            yield CheckHit(
                line=node.lineno,
                title=f"{target} {op} {_short(value)} {module.where(node)} changes per frame, not per second",
                why="The amount is applied once per frame, so objects move faster on fast machines "
                "and slower when the frame rate drops.",
                fix=f"Take the frame time as a parameter ({function.name}(self, dt)) and scale "
                "by it (self.x += self.speed * dt), or run this from a fixed-timestep loop.",
            )


# --------------------------------------------------------------------------
# py-unseeded-random

_RANDOM_FUNCTIONS = {
    "random",
    "randint",
    "randrange",
    "choice",
    "choices",
    "shuffle",
    "sample",
    "uniform",
    "gauss",
    "normalvariate",
    "triangular",
    "betavariate",
    "expovariate",
    "getrandbits",
}
_GAMEPLAY = re.compile(r"(update|tick|step|spawn|generate|simulate|roll)|(spawn|simulate|roll)_\w+")
_NOT_GAMEPLAY = {"token", "password", "passwd", "secret", "salt", "nonce", "key", "otp", "pin"}
_NOT_GAMEPLAY |= {"code", "uuid", "id", "ids", "hash", "session", "csrf", "api"}


def _random_names(module: PyModule) -> dict[str, str]:
    """Local name -> ``random.<fn>`` for ``from random import randint`` style imports."""
    names: dict[str, str] = {}
    for node in module.of_type(ast.ImportFrom):
        if isinstance(node, ast.ImportFrom) and node.module == "random":
            for alias in node.names:
                if alias.name in _RANDOM_FUNCTIONS:
                    names[alias.asname or alias.name] = f"random.{alias.name}"
    return names


def _seeded(module: PyModule) -> bool:
    for node in module.of_type(ast.Call):
        if not isinstance(node, ast.Call):
            continue
        name = call_name(node)
        if name in {"random.seed", "seed"}:
            return True
        if name in {"random.Random", "Random"} and (node.args or node.keywords):
            return True
    return False


def _gameplay_function(name: str, game: bool) -> bool:
    if game:
        return True
    tokens = set(name.lower().split("_"))
    return bool(_GAMEPLAY.fullmatch(name.lstrip("_"))) and not tokens & _NOT_GAMEPLAY


def _global_random_calls(module: PyModule) -> list[tuple[ast.Call, str]]:
    imported = _random_names(module)
    found: list[tuple[ast.Call, str]] = []
    for node in module.of_type(ast.Call):
        if isinstance(node, ast.Call):
            name = call_name(node)
            name = imported.get(name, name)
            parts = name.split(".")
            if len(parts) == 2 and parts[0] == "random" and parts[1] in _RANDOM_FUNCTIONS:
                found.append((node, name))
    return found


@python_check(
    "py-unseeded-random",
    tag="game-design",
    severity="P2",
    summary="Gameplay/simulation code draws from the unseeded global random generator",
    tests=False,
    match=[
        example_lines(
            "import random",
            "def spawn_enemy(world):",
            "    x = random.randint(0, world.width)",
            "    world.add(Enemy(x, random.choice(KINDS)))",
        ),
        example_lines(
            "from random import uniform",
            "class Weather:",
            "    def update(self):",
            "        self.wind = uniform(-WIND, WIND)",
        ),
        example_lines(
            "import random",
            "def roll(sides):",
            "    return random.randint(1, sides)",
        ),
    ],
    no_match=[
        example_lines(
            "import random",
            "def spawn_enemy(world, rng: random.Random):",
            "    x = rng.randint(0, world.width)",
            "    world.add(Enemy(x, rng.choice(KINDS)))",
        ),
        example_lines(
            "import random",
            "random.seed(SEED)",
            "def roll(sides):",
            "    return random.randint(1, sides)",
        ),
        example_lines(
            "import random",
            "def generate_token():",
            "    return ''.join(random.choice(ALPHABET) for _ in range(8))",
        ),
        example_lines(
            "import random",
            "def pick_greeting():",
            "    return random.choice(GREETINGS)",
        ),
    ],
)
def unseeded_random(module: PyModule) -> Iterator[CheckHit]:
    if "random" not in module.text:
        return
    calls = _global_random_calls(module)
    if not calls or _seeded(module):
        return
    game = game_module(module)
    reported: set[str] = set()
    for node, name in calls:
        function = module.enclosing_function(node)
        if function is None or not _gameplay_function(function.name, game):
            continue
        where = module.where(node)
        if where in reported:
            continue
        reported.add(where)
        yield CheckHit(
            line=node.lineno,
            title=f"{name}() {where} uses the unseeded global random generator",
            why="Every run draws different numbers and the seed is never known, so a bug report, "
            "a replay or a balance test cannot reproduce the same run.",
            fix="Create one rng = random.Random(seed) per run or level, log the seed, pass rng "
            f"into this code and call rng.{name.split('.')[1]}(...) instead.",
        )


# --------------------------------------------------------------------------
# py-tuning-constant-in-loop


def _region_name(region: ast.AST, module: PyModule) -> str:
    if isinstance(region, ast.While):
        return f"the game loop {module.where(region)}"
    if isinstance(region, ast.FunctionDef | ast.AsyncFunctionDef) and region.body:
        return module.where(region.body[0])
    return "the loop"


def _unit_conversion(expr: ast.expr, module: PyModule) -> bool:
    """``clock.tick(FPS) / 1000``: milliseconds to seconds is not a tuning value."""
    parent = module.parents.get(expr)
    scales = isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Div | ast.Mult)
    return scales and isinstance(expr, ast.Constant) and expr.value in (1000, 60)


def tuning_literals(module: PyModule) -> Iterator[tuple[ast.expr, float, str, ast.AST]]:
    """(expression, value, context, region) for each non-trivial literal in a game loop."""
    regions = tuning_regions(module)
    for region in regions:
        for node in ast.walk(region):
            found = numeric_literal(node, module)
            if found is None or found[1] in _TRIVIAL:
                continue
            owner = next((a for a in module.ancestors(node) if a in regions), None)
            context = in_arithmetic(found[0], module)
            if owner is not region or context is None or _unit_conversion(found[0], module):
                continue
            if not literal_exempt(found[0], module):
                yield found[0], found[1], context, region


@python_check(
    "py-tuning-constant-in-loop",
    tag="game-design",
    severity="P3",
    summary="Gameplay numbers (speeds, damage, spawn rates) hard-coded in update/tick/game loops",
    match=[
        example_lines(
            "import pygame",
            "class Player:",
            "    def update(self):",
            "        if self.hp < 25:",
            "            self.speed = self.base_speed * 0.6",
        ),
        example_lines(
            "def step(world, dt):",
            "    world.spawn_timer += dt",
            "    if world.spawn_timer > 3.5:",
            "        world.spawn_enemy()",
        ),
        example_lines(
            "import pygame",
            "running = True",
            "while running:",
            "    player.x += 4",
            "    clock.tick(FPS)",
        ),
    ],
    no_match=[
        example_lines(
            "import pygame",
            "class Player:",
            "    def update(self):",
            "        if self.hp < TUNING.low_hp:",
            "            self.speed = self.base_speed * TUNING.wounded_speed",
        ),
        example_lines(
            "def step(world, dt):",
            "    world.spawn_timer += dt",
            "    if world.spawn_timer > world.level.spawn_interval:",
            "        world.spawn_enemy()",
        ),
        example_lines(
            "class Cache:",
            "    def update(self, key, value):",
            "        if len(self.items) > 500:",
            "            self.items.clear()",
        ),
    ],
)
def tuning_constant_in_loop(module: PyModule) -> Iterator[CheckHit]:
    reported: set[tuple[int, float]] = set()
    for expr, value, context, region in tuning_literals(module):
        if (id(region), value) in reported:
            continue
        reported.add((id(region), value))
        yield CheckHit(
            line=expr.lineno,
            title=f"Tuning value {_format(value)} hard-coded in {context} in "
            f"{_region_name(region, module).removeprefix('in ')}",
            why="Balance numbers buried in the frame loop are hard to find, tweak and test "
            "together, and the same value tends to be copied with different meanings.",
            fix="Move it to a named tuning table (a dataclass or data file such as "
            "TUNING.wounded_speed) that designers can adjust without touching the loop.",
        )
