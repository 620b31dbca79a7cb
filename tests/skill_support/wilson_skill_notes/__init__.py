"""A small third-party skill, installed for the tests as its own distribution (the dist-info beside
it, found by importlib.metadata once this folder is on sys.path): notes kept as text files in a
folder. It brings a buffered receptor (each new file), a read tool over what the receptor saw, a
mutating tool that writes a note (through its channel, as an effector), a config section and a
prompt line. It uses nothing but what any skill may: wilson.skills, the base channel, the models."""

from __future__ import annotations

from pathlib import Path

from channels.base import Channel as ChannelActor
from storage.models import ReceptorBuffer
from wilson.skills import Channel, Section, Skill, Tool

PROMPT = "The user's notes folder is read with list_notes; write_note proposes a new note."


class NotesChannel(ChannelActor):
    name = "notes"
    can_deliver = True

    def folder(self) -> Path:
        return Path(self.config.get("notes", "dir"))

    def sync(self, reason: str) -> int:
        made = 0
        for path in sorted(self.folder().glob("*.txt")):
            row = self.buffer(
                path.read_text(encoding="utf-8"), dedup_key=f"notes:{path.name}", payload={"file": path.name}
            )
            made += row is not None
        return made

    def send(self, row) -> dict:
        written = self.folder() / "written"
        written.mkdir(exist_ok=True)
        (written / f"{row.payload['title']}.txt").write_text(row.text, encoding="utf-8")
        return {"written": row.payload["title"]}


class ListNotes(Tool):
    name = "list_notes"
    description = "The notes in the user's notes folder."
    parameters = {"type": "object", "properties": {}}
    read_only = True
    untrusted = "your notes folder"

    def execute(self, args, call):
        rows = ReceptorBuffer.select().where(ReceptorBuffer.channel == "notes").order_by(ReceptorBuffer.id)
        return {"notes": [row.text for row in rows]}


class WriteNote(Tool):
    name = "write_note"
    description = "Propose writing a note into the user's notes folder."
    parameters = {
        "type": "object",
        "required": ["title", "text"],
        "properties": {"title": {"type": "string", "maxLength": 40}, "text": {"type": "string"}},
    }

    def validate(self, args, call):
        problem = self.check_args(args)
        if problem is None and not args["title"].isalnum():
            return "title must be one word of letters and digits"
        return problem

    def describe(self, args, call):
        return f"Write the note “{args['title']}”: {args['text']}"

    def execute(self, args, call):
        return {"outbox_id": call.send("notes", args["text"], {"title": args["title"]})}


def check(values: dict) -> list[str]:
    folder = values.get("dir")
    return [] if not folder or Path(folder).is_dir() else [f"dir {folder} is not a folder"]


SKILL = Skill(
    description="Notes: the text files in a folder, and new ones you approve.",
    tools=(ListNotes, WriteNote),
    channels=(
        Channel(
            "notes", NotesChannel, priority=40, buffered=True, enabled=lambda config: bool(config.get("notes", "dir"))
        ),
    ),
    config=Section(
        defaults={"dir": "", "poll": "off"},
        schema={"dir": ("text", "the notes folder"), "poll": ("duration_or_off", "how often it is read")},
        check=check,
    ),
    prompt=PROMPT,
)
