from wordcount import count_words


def test_count_words_hidden():
    assert count_words("") == 0
    assert count_words("\tone\ntwo  three ") == 3
