"""One agent's prompt, rendered from a template and saved for audit (PROTOCOL.md section 4.4).

The template (``fluxdrive/data/prompts/review.md``) frames the agent's own
instructions with what this run knows: the input and the content file the
agent should read (its slice, when content routing is active), the merged
domain criteria, the knowledge context, and - for Stage 2 - the Stage 1
findings and the research answers. Every rendered prompt is written to
``OUTPUT_DIR/prompts/<agent>.md``, so a reviewer of the review can see
exactly what each agent was asked. Runtimes without a model (static) ignore
the text; the file is still written, because the audit trail must not depend
on the runtime.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from fluxdrive.agents import AgentDefinition
from fluxdrive.core.atomic import atomic_write_text

PROMPTS_DIR = "prompts"
NO_KNOWLEDGE = "No recorded project knowledge applies here; rely on the code and the criteria above."


@dataclass(frozen=True, slots=True)
class PromptContext:
    """What the run tells every agent of a stage (per-agent parts are arguments)."""

    input_label: str
    input_type: str
    project_root: Path
    output_dir: Path
    channel_path: Path
    stage: int = 1
    stage1_findings: str = ""
    research: str = ""


@functools.lru_cache(maxsize=1)
def _template() -> str:
    return (resources.files("fluxdrive") / "data" / "prompts" / "review.md").read_text(encoding="utf-8")


def _fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    return text


def _stage_context(context: PromptContext) -> str:
    if context.stage == 1:
        return ""
    parts = ["", "## Stage 1 findings", "", context.stage1_findings.strip() or "Stage 1 reported no findings.", ""]
    if context.research.strip():
        parts += ["## Research results", "", context.research.strip(), ""]
    parts += [
        "Build on these: confirm or dispute them with evidence from your lane, and do not repeat them",
        "unless you add something new.",
        "",
    ]
    return "\n".join(parts)


def render_prompt(
    agent: AgentDefinition,
    context: PromptContext,
    *,
    content_path: Path,
    slice_note: str,
    domain_criteria: str,
    knowledge: str = "",
    evidence: str = "",
) -> str:
    """The full prompt for ``agent``: the template around its own instructions (and ``evidence``: the analyzer
    candidates it is to confirm or refute, fluxdrive.launch.evidence, after the stage context)."""
    output_path = context.output_dir / f"{agent.name}.md"
    per_agent = {"output_path": str(output_path), "channel_path": str(context.channel_path), "name": agent.name}
    values = {
        **per_agent,
        "stage_label": f"Stage {context.stage}",
        "description": agent.description,
        "input_label": context.input_label,
        "input_type": context.input_type,
        "project_root": str(context.project_root),
        "content_path": str(content_path),
        "slice_note": slice_note,
        "domain_criteria": domain_criteria,
        "knowledge": knowledge.strip() or NO_KNOWLEDGE,
        "stage_context": _stage_context(context) + evidence,
        "instructions": _fill(agent.instructions, per_agent).strip(),
    }
    return _fill(_template(), values).rstrip() + "\n"


def save_prompt(output_dir: Path, agent: str, text: str) -> Path:
    """Write ``OUTPUT_DIR/prompts/<agent>.md`` atomically."""
    path = Path(output_dir) / PROMPTS_DIR / f"{agent}.md"
    atomic_write_text(path, text)
    return path
