"""Tests for Twilio addresses and canonical E.164 phone numbers."""

import pytest

from bot.core.addresses import (
    Address,
    InvalidPhoneNumber,
    canonical_phone,
    format_address,
    parse_address,
)


def test_a_bare_e164_address_is_sms():
    assert parse_address("+15551234567") == Address(channel="sms", e164="+15551234567")


def test_a_whatsapp_prefixed_address_is_whatsapp():
    assert parse_address("whatsapp:+15551234567") == Address("whatsapp", "+15551234567")


@pytest.mark.parametrize("raw", ["+15551234567", "whatsapp:+447911123456"])
def test_formatting_a_parsed_address_gives_back_the_twilio_value(raw):
    address = parse_address(raw)
    assert format_address(address.channel, address.e164) == raw
    assert str(address) == raw


def test_an_unsupported_channel_prefix_is_refused():
    with pytest.raises(ValueError, match="unsupported channel 'messenger'"):
        parse_address("messenger:+15551234567")


@pytest.mark.parametrize("raw", ["15551234567", "whatsapp:15551234567", "+1 555 123 4567", ""])
def test_an_address_that_is_not_e164_is_refused(raw):
    with pytest.raises(ValueError, match="E.164"):
        parse_address(raw)


def test_an_address_cannot_be_built_from_a_number_that_is_not_e164():
    with pytest.raises(ValueError, match="E.164"):
        Address(channel="sms", e164="5551234567")


def test_formatting_for_an_unknown_channel_is_refused():
    with pytest.raises(ValueError, match="unsupported channel"):
        format_address("fax", "+15551234567")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("+1 415 555 2671", "+14155552671"),
        ("+44 7911 123456", "+447911123456"),
        ("+44 (0)20 7946 0958", "+442079460958"),
        ("+34 612 34 56 78", "+34612345678"),
        ("+61 412 345 678", "+61412345678"),
    ],
)
def test_an_international_number_becomes_e164(raw, expected):
    assert canonical_phone(raw, None) == expected


@pytest.mark.parametrize(
    ("raw", "region", "expected"),
    [
        ("(415) 555-2671", "US", "+14155552671"),
        ("07911 123456", "GB", "+447911123456"),
        ("612 34 56 78", "ES", "+34612345678"),
        ("0412 345 678", "au", "+61412345678"),
    ],
)
def test_a_national_number_is_read_in_the_default_region(raw, region, expected):
    assert canonical_phone(raw, region) == expected


def test_an_explicit_country_code_wins_over_the_default_region():
    assert canonical_phone("+61 412 345 678", "GB") == "+61412345678"


@pytest.mark.parametrize(
    ("raw", "region", "reason"),
    [
        ("hello", None, "not a phone number"),
        ("4155552671", None, r"as \+4155552671: too short for \+41 \(CH\); write it with \+"),
        ("447700900123", "US", r"not a valid number for \+44 \(GB\); as a US number: too long"),
        ("+999 1234", None, "unknown country code"),
        ("+1415555", None, r"too short for \+1 \(US\)"),
        ("+141555526711111", None, r"too long for \+1 \(US\)"),
        ("1" * 30, "US", "too long to be a phone number"),
        ("555-0100", "US", "without its area code"),
        ("+19995552671", None, r"not a valid number for \+1 \(US\)"),
        ("+34 123 456 789", None, r"not a valid number for \+34 \(ES\)"),
        ("07911 123456", "XX", "unknown default region 'XX'"),
    ],
)
def test_an_unusable_number_is_refused_with_its_reason(raw, region, reason):
    with pytest.raises(InvalidPhoneNumber, match=reason):
        canonical_phone(raw, region)


def test_an_invalid_phone_number_is_a_value_error():
    assert issubclass(InvalidPhoneNumber, ValueError)


@pytest.mark.parametrize(
    ("raw", "region", "expected"),
    [
        ("447911123456", "US", "+447911123456"),  # PromptPipe's stored form
        ("447911123456", None, "+447911123456"),
        ("34612345678", "GB", "+34612345678"),
        ("14155552671", "US", "+14155552671"),  # both readings are the same number
        ("00447911123456", "US", "+447911123456"),
        ("0044 7911 123456", None, "+447911123456"),
        ("0061 412 345 678", "GB", "+61412345678"),
    ],
)
def test_digits_with_a_country_code_and_00_prefixes_are_read_for_any_country(raw, region, expected):
    assert canonical_phone(raw, region) == expected


def test_digits_that_are_a_valid_number_both_ways_are_refused_saying_how_to_write_them():
    with pytest.raises(InvalidPhoneNumber) as refused:
        canonical_phone("6465025300", "US")

    message = str(refused.value)
    assert message.startswith("ambiguous: 6465025300 could be +6465025300")
    assert message.endswith("with + and its country code, +6465025300 or +16465025300")
