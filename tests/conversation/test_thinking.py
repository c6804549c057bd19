"""Separating a model's reasoning from what a participant may be sent."""

from bot.conversation.thinking import Reply, split_thinking


def test_plain_text_is_the_content():
    assert split_thinking("  Good morning!  ") == Reply("Good morning!")


def test_nothing_is_no_content():
    assert split_thinking(None) == Reply(None)
    assert split_thinking("   ") == Reply(None)


def test_every_think_block_is_removed_and_kept_as_thinking():
    reply = split_thinking("<think>a</think>Hello <THINKING>b</THINKING>there")

    assert reply == Reply("Hello there", "a\n\nb")


def test_a_reply_whose_opening_tag_was_in_the_prompt_loses_everything_before_the_close():
    assert split_thinking("plan the reply</think>\n\nHi!") == Reply("Hi!", "plan the reply")


def test_an_unclosed_think_block_is_all_thinking():
    assert split_thinking("Sure. <think>the reply was cut off here") == Reply(
        "Sure.", "the reply was cut off here"
    )


def test_only_thinking_is_no_content():
    assert split_thinking("<think>nothing to say</think>") == Reply(None, "nothing to say")


def test_the_json_wrapper_gives_its_content_and_keeps_its_thinking():
    reply = split_thinking('{"thinking": "be kind", "content": "Well done!"}')

    assert reply == Reply("Well done!", "be kind")


def test_a_fenced_json_wrapper_is_unwrapped_too():
    reply = split_thinking('```json\n{"thinking": "t", "content": "Hi"}\n```')

    assert reply == Reply("Hi", "t")


def test_a_wrapper_with_empty_content_means_nothing_to_send():
    assert split_thinking('{"thinking": "tools first", "content": ""}') == Reply(
        None, "tools first"
    )


def test_a_wrapper_that_does_not_parse_is_a_problem_not_text():
    reply = split_thinking('{"thinking": "secret", "content": "Hel')

    assert reply.content is None
    assert "not JSON" in reply.problem
    assert "secret" in reply.thinking


def test_a_wrapper_whose_content_is_not_text_is_a_problem():
    reply = split_thinking('{"thinking": "t", "content": {"text": "Hi"}}')

    assert (reply.content, reply.problem) == (None, "the wrapper's content is a dict, not text")


def test_json_that_is_not_the_wrapper_is_left_as_text():
    assert split_thinking('{"steps": 3}') == Reply('{"steps": 3}')
    assert split_thinking("{not json at all}") == Reply("{not json at all}")


def test_a_separate_reasoning_field_is_thinking():
    assert split_thinking("Hi", reasoning="  think  ") == Reply("Hi", "think")
