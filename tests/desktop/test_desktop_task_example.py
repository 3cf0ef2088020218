"""Issue 22: the Task page's example of the document form (the GUI relays; the check lives in core)."""

from __future__ import annotations

from tests.desktop.test_desktop_officer import to_task_page


def test_a_shipped_form_or_an_invented_example_reaches_the_spec(wizard, tmp_path):
    to_task_page(wizard, tmp_path)
    task = wizard.task_page
    task.form.setCurrentIndex(task.form.findData("review"))
    assert task.blocking_message() == ""
    task.example.setPlainText("Visit note. [name] has [complaint]; advised [treatment].")
    assert task.blocking_message() == ""
    task.store()
    form = wizard.controller.spec.document  # the shared [document] section, whatever the method
    assert (form.document_form, form.public_example) == ("review",
                                                         "Visit note. [name] has [complaint]; advised [treatment].")
    assert "document_form" not in vars(wizard.controller.spec.dp_synrag)


def test_a_pasted_real_document_blocks_the_page_with_a_message(wizard, tmp_path):
    to_task_page(wizard, tmp_path)
    task = wizard.task_page
    task.example.setPlainText("Patient 12 came in with fever and was sent home to rest.")  # row n12 of the corpus
    message = task.blocking_message()
    assert "looks like a real document" in message and "invented example" in message
    assert "Patient 12" not in message  # the message quotes nothing of the corpus
    task.example.setPlainText("")
    assert task.blocking_message() == ""
