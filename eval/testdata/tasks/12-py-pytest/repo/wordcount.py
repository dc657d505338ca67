"""Word statistics for the editor's status bar."""


def count_words(text):
    """Return the number of words in text (runs of whitespace separate words)."""
    return len(text.split(" "))


def longest_word(text):
    """Return the longest word, the first one on ties; "" for no words."""
    best = ""
    for word in text.split():
        if len(word) > len(best):
            best = word
    return best
