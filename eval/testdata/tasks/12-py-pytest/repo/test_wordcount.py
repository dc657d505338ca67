from wordcount import count_words, longest_word


def test_count_words_simple():
    assert count_words("one two three") == 3


def test_count_words_whitespace():
    assert count_words("  hello   world\n") == 2


def test_longest_word():
    assert longest_word("a bb ccc dd") == "ccc"
