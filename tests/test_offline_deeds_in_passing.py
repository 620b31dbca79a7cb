"""A deed told in passing, in the words people write (wilson/model/offline/deeds_in_passing.py): it finishes the one
open task whose thing it names and whose act it is, and nothing when it asks, denies or promises, names no task's
thing, or fits two tasks alike. From the blind batches' dev halves, where each was left unread and followed up for
days as if undone."""

from __future__ import annotations

from tests.offline_support import read
from wilson.model.offline.deeds_in_passing import deed_in_passing, paid_already
from wilson.model.offline.phrases import Chat
from tests.offline_support import BERLIN, NOW, PLAYBOOK

TOUR = "Chorreise Riga – Kammerchor Cantamus"
FLIGHTS = {"id": 1, "title": "Book flights", "topic": TOUR, "due": "2027-06-14"}
ROOMS = {"id": 2, "title": "Book accommodation", "topic": TOUR, "due": "2027-06-21"}
INSURANCE = {"id": 3, "title": "Buy travel insurance", "topic": TOUR, "due": "2027-07-01"}
CERTIFICATE = {"id": 4, "title": "Send a scan of the extended certificate of good conduct", "due": "2027-04-15"}
DRAFT = {"id": 5, "title": "Check: UR-Nr. 412/2027 – Entwurf Kaufvertrag Wohnung", "due": "2027-04-13"}


def done(said: str, *tasks: dict) -> list:
    return read(said, tasks=list(tasks)).calls


def test_a_deed_in_another_language_finishes_the_task_it_names():
    assert done("Flüge nach Riga sind gebucht, airBaltic ab BER ✈️", FLIGHTS, ROOMS, INSURANCE) == [
        ("complete_task", {"task_id": 1})
    ]
    assert done("Führungszeugnis ist gekommen, scanned it and sent it to Priya", CERTIFICATE, FLIGHTS) == [
        ("complete_task", {"task_id": 4})
    ]
    assert done(
        "Entwurf gelesen, alles ok, hab dem Notariat geschrieben dass wir keine Änderungen haben", DRAFT, FLIGHTS
    ) == [("complete_task", {"task_id": 5})]


def test_a_deed_of_another_act_or_of_no_tasks_thing_finishes_nothing():
    chat = Chat(text="", now=NOW, tz=BERLIN, playbook=PLAYBOOK, tasks=[FLIGHTS, ROOMS, INSURANCE])
    # the hall booked twice is no flight booked: the topic's place alone names no task
    assert deed_in_passing(chat, "the Riga tour got pushed back, the concert hall was double booked") is None
    # bought is not booked
    assert deed_in_passing(chat, "Flüge gekauft") is None
    # two tasks alike: the user names which
    assert deed_in_passing(chat, "Riga ist gebucht") is None


def test_someone_elses_own_deed_a_call_to_the_user_or_a_deed_beside_a_need_finishes_nothing():
    dentist = {"id": 6, "title": "Call the dentist", "due": "2027-01-20"}
    fee = {"id": 7, "title": "Pay the course fee", "due": "2027-01-20"}
    gift = {"id": 8, "title": "Geschenk für Mama", "due": "2027-01-20"}
    tax = {"id": 9, "title": "Steuererklärung", "due": "2027-05-31"}
    book = {"id": 10, "title": "Return the library book", "due": "2027-01-20"}
    chat = Chat(text="", now=NOW, tz=BERLIN, playbook=PLAYBOOK, tasks=[FLIGHTS, dentist, fee, gift, tax, book])
    for said in (
        "Anna booked her flights to Riga",
        "My sister paid her course fee",
        "the dentist called",
        "Mama hat angerufen",
        "das Finanzamt hat wegen der Steuererklärung angerufen",
        "I called Anna today, still need to call the dentist",
        "Steuerberater hat die Steuererklärung geprüft, ich muss sie noch abschicken",
        "the library booked the room for the reading",
    ):
        assert deed_in_passing(chat, said) is None, said
    # a title naming no act is finished by a word of done that names none either
    assert deed_in_passing(chat, "Steuererklärung erledigt ✅").calls == [("complete_task", {"task_id": 9})]


def test_a_deed_asked_denied_or_promised_is_none():
    chat = Chat(text="", now=NOW, tz=BERLIN, playbook=PLAYBOOK, tasks=[FLIGHTS, CERTIFICATE])
    for said in (
        "Flüge noch nicht gebucht",
        "flights not booked yet",
        "Flüge sind gebucht?",
        "can you check the flights are booked",
        "I will have the flights booked by Friday",
        "Flüge bitte bis Freitag buchen, sind dann gebucht",
        "I haven't booked the flights",
        "the flights aren't booked",
        "I almost booked the flights",
        "Hopefully the flights are booked",
        "Anna said the flights are booked",
        "the flights are booked out",
    ):
        assert deed_in_passing(chat, said) is None, said


def test_a_sum_told_paid_is_no_bill_to_plan():
    said = "war heute im Kundenzentrum am Alex, Ticket gezeigt, 7 € bezahlt – erledigt"
    assert paid_already(said) and not paid_already("7 € noch nicht bezahlt, bis Freitag")
    assert not paid_already("Paid 40 € for the school trip, another 120 € due by 1 March")
    assert not [name for name, _ in done(said) if name in ("create_topic", "create_task")]
