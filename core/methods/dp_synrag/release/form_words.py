"""The public word lists structure discovery's proposals read besides the English and name lists (docs/method.md
§2.0b): abbreviations a form writes, month and day names, and number words before a unit of time."""

from __future__ import annotations

# public abbreviations a form writes around its numbers and headings (units, vital signs, titles); no English word list
# holds them, yet they are a form's wording, not a slot's filler
ABBREVIATIONS = frozenset([
    "mg", "mcg", "ml", "kg", "g", "cm", "mm", "km", "lb", "lbs", "oz", "hr", "hrs", "h", "min", "mins", "sec",
    "yr", "yrs", "y", "o", "wk", "wks", "mo", "mos", "bpm", "mmhg", "bp", "hr", "rr", "spo", "temp", "dob",
    "pt", "pts", "dr", "mr", "mrs", "ms", "st", "no", "tel", "ref", "id", "iv", "im", "po", "prn", "bd", "bid",
    "tds", "tid", "qds", "qid", "od", "am", "pm", "pmh", "hpi", "ros", "dx", "rx", "hx", "tx", "sx", "fx", "cc"
])

# number words a form writes before a unit of time ("two weeks"): a number slot, as "2 weeks"
NUMBER_WORDS = frozenset({"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"})
TIME_UNITS = frozenset({"hour", "hours", "day", "days", "week", "weeks", "month", "months", "year", "years"})

MONTHS = frozenset([
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "mon", "tue", "tues", "wed",
    "thu", "thur", "thurs", "fri", "sat", "sun"
])
