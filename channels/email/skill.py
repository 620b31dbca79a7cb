"""The email skill: the email channel (IMAP in, SMTP out) and the send_email tool.

send_email is a mutation: the cortex only proposes it with the whole draft shown; its execution,
run by the approval gate inside its transaction for an approved item, queues one outbox row keyed
by the item (channels/email/smtp.py) and asks the gate to tell the channel after the commit.
"""

from __future__ import annotations

from channels.email.smtp import queue_send
from wilson.skills import Channel, Skill, Tool


def _sending(config) -> bool:
    return bool(config.get("email", "smtp_host")) and bool(
        config.get("email", "from_address") or config.get("email", "username"))


class SendEmail(Tool):
    name = "send_email"
    description = ("Propose sending an email for the user (to, subject, body in full). For a reply, pass the "
                   "Message-ID of the mail answered as in_reply_to.")
    parameters = {"type": "object", "required": ["to", "subject", "body"],
                  "properties": {"to": {"type": "string"}, "subject": {"type": "string"}, "body": {"type": "string"},
                                 "in_reply_to": {"type": "string"}}}
    read_only = False
    limits = {"to": 320, "subject": 300, "body": 20000, "in_reply_to": 500}

    def needs(self, config) -> str:
        # not offered at all until it can really send: never a draft that cannot go out
        return "" if _sending(config) else "email sending is not set up (no [email] smtp_host and from_address)"

    def validate(self, args, call):
        problem = self.check_args(args)
        if problem:
            return problem
        if not _sending(call.config):
            return self.needs(call.config)
        to = str(args["to"]).strip()
        if "@" not in to or any(c in to for c in "\r\n"):
            return f"not an email address: {to}"
        return None

    def describe(self, args, call):
        line = f"Send email to {args['to']}\n   Subject: {args['subject']}\n   Body: {args['body']}"
        return line + (f"\n   In reply to: {args['in_reply_to']}" if args.get("in_reply_to") else "")

    def execute(self, args, call):
        result = queue_send(args, key=f"item:{call.item_id}", trace_id=call.trace_id, at=call.now, config=call.config)
        call.nudge("email", result["outbox_id"])
        return result


SKILL = Skill(
    description="Email: reads your mail into the briefing, sends only what you approve.",
    tools=(SendEmail,),
    channels=(Channel("email", "channels.email.channel:EmailChannel", priority=30, buffered=True,
                      enabled=lambda config: bool(config.get("email", "imap_host") or config.get("email", "smtp_host"))),),
)
