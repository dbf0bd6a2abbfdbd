"""Whose words (pure): the parts of a message that the speaker hands over rather than says.

A user's message holds their own words and, often, someone else's: a pasted e-mail, a post
found online, a colleague's intro to shorten, a script, a poem, a table, markup. Extraction
learns the user's facts from their own words only, and the injection scanner reads handed-over
text in another voice, so both ask :func:`quoted_regions` (spans of the text given) or
:func:`quoted_spans` (of its folded view) where that material is.

The rules are structural: an *introduced* span runs to the end of the paragraph or the turn,
since pasted material has blank lines and end markers of its own that a sender can forge.

- **Marked quotation**: code fences and inline ```code```, ``>`` lines, quoted strings of three
  words or more, HTML comments and elements, Markdown headings (to the end), e-mail headers,
  CSV/TSV/table rows, verse (three or more short unpunctuated lines, or four).
- **Lead-ins**: ``<lead-in>: <material>``. A lead-in is the user's own label when it is theirs
  ("my stack:", "I have three cats:") or a discourse label ("update:", "fyi:", "btw:"); any
  other lead-in introduces what follows ("Found this on a subreddit:", "Pasting the team
  handbook:", "Dana's bio:"), and so does a lead-in that names a handover ("I copied this
  from…:") or someone else's text ("my colleague's intro:"). Inline, to the end of the
  paragraph; ending its line, to the end of the turn.
- **Speaker lines**: two or more lines that start with a speaker's label ("You: …", "Me: …",
  "Dana: …", "Q: …"): a script, an interview, meeting notes — from the first to the end.
- **Announcements**: a sentence that hands material over ("Pasting the team handbook.",
  "Found this on a forum", "here is the e-mail:"): what follows, to the end of the turn.
- **Requests to act on a text** (tidy, format, translate, summarise, proofread, shorten,
  "what does this mean", "write a story where…"): the text they act on — what follows them,
  or, when the request comes last and points back ("… can you shorten this?"), what precedes
  it.
- **Reported speech** ("she said", "the knight says", "my boss told me"): what follows, to the
  end of the paragraph.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from ..patterns import lazy
from .spans import Span, merge, to_raw
from .text import fold, fold_pattern


def _rx(pattern: str, flags: int = re.IGNORECASE) -> re.Pattern[str]:
    return lazy(pattern, flags)


_NOUNS = (
    r"(?:e-?mails?|mails?|documents?|docs?|files?|readme|csv|spreadsheets?|sheets?|tables?|pages?"
    r"|web\s?pages?|websites?|sites?|articles?|posts?|output|logs?|messages?|texts?|transcripts?"
    r"|chats?|conversations?|threads?|letters?|notes?|comments?|reviews?|tickets?|issues?|snippets?"
    r"|excerpts?|reports?|json|yaml|xml|html|responses?|repl(?:y|ies)|results?|data|content|code"
    r"|scripts?|descriptions?|listings?|tweets?|summar(?:y|ies)|contracts?|invoices?|memos?|pdfs?"
    r"|paragraphs?|passages?|quotes?|statements?|announcements?|newsletters?|polic(?:y|ies)"
    r"|manuals?|instructions|prompts?|rows?|cells?|entr(?:y|ies)|records?|ocr)"
)
_TASKS = (
    r"(?:summari[sz]e|translate|proofread|review|analy[sz]e|rewrite|paraphrase|fix|check"
    r"|classify|reply\s+to|respond\s+to|correct|edit|explain|format|parse|improve|shorten"
    r"|critique|reword|rephrase|polish|simplify|spell[- ]?check|grammar[- ]?check|make\s+(?:this"
    r"|it)|turn\s+(?:this|it)|convert|traduis|traduce|traducir|ubersetze?)"
)
"""Tasks done on a text the user hands over: what follows them is that text, not the user
speaking ("translate this into French: I hate mornings", "fix the grammar: …")."""
_TASK_QUOTE = _rx(
    rf"\b{_TASKS}\s+(?:this\s+|the\s+(?:phrase|sentence|text|line)\s+)?"
    r"(?:\"([^\"\n]{1,300})\"|\u201c([^\u201d\n]{1,300})\u201d|'([^'\n]{1,300})'"
    r"|\u2018([^\u2019\n]{1,300})\u2019)"
)
"""A task on a short quoted text ("translate 'I live in Berlin' into Spanish")."""
_INTRO = _rx(
    r"\b(?:here(?:'s|\s+is|\s+are|\s+it\s+is)|below\s+(?:is|are)|(?:the\s+)?following\s+(?:is|are)"
    r"|this\s+is|attached\s+(?:is|are)|pasted\s+below|pasting|forwarding"
    r"|i(?:'ve|\s+have)?\s+(?:just\s+)?(?:pasted|copied|received|got|forwarded|attached|included"
    r"|found))\b"
    rf"[^\n:]{{0,80}}?\b{_NOUNS}\b[^\n:]{{0,60}}?:"
    r"|\b(?:here(?:'s|\s+is|\s+are)|below\s+(?:is|are)|(?:the\s+)?following\s+(?:is|are)"
    r"|pasted\s+below)\b"
    rf"[^\n:]{{0,80}}?\b{_NOUNS}\b[^\n:.?!]{{0,60}}?$"
    rf"|\b{_TASKS}\b[^\n:]{{0,60}}?:"
    rf"|^[ \t]*(?:(?:please|can\s+you|could\s+you|would\s+you)\s+)?{_TASKS}\b[^\n:.?!]{{0,60}}\n"
    r"|\b(?:wrote|writes|says|said|reads|stated|replied|posted|commented|tweeted|returned|returns"
    r"|shows|contains|outputs|printed|prints|responded\s+with|came\s+back\s+with)\s*:"
    r"|^-{3,}\s*(?:original\s+message|forwarded\s+message)\s*-{3,}",
    re.IGNORECASE | re.MULTILINE,
)
_HEADERS = _rx(
    r"^(?:from|to|subject|cc|bcc|date|sent|reply-to)\s*:[^\n]*\n"
    r"(?:[ \t]*(?:from|to|subject|cc|bcc|date|sent|reply-to)\s*:[^\n]*(?:\n|\Z))+",
    re.IGNORECASE | re.MULTILINE,
)
_BLOCKQUOTE = lazy(r"^[ \t]{0,3}>[^\n]*(?:\n[ \t]{0,3}>[^\n]*)*", re.MULTILINE)
_QUOTED_STRING = lazy(
    r"\"(?:[^\"\n]|\n(?![ \t]*\n)){30,2000}\"|\u201c[^\u201d]{30,2000}\u201d"
    r"|\u00ab[^\u00bb]{30,2000}\u00bb"
    r"|\u201e[^\u201c\u201d]{30,2000}[\u201c\u201d]|\u300c[^\u300d]{8,2000}\u300d"
    r"|\u300e[^\u300f]{8,2000}\u300f"
)
_COMMENT = lazy(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_FENCE = lazy(r"^[ \t]*(`{3,}|~{3,})", re.MULTILINE)
_DELIMITERS = (
    lazy(r",(?! )"),
    lazy(r";"),
    lazy("\t"),
    lazy(r"\|"),
)
_CELL_QUOTE = lazy(r"\"[^\"\n]*\"")


_TEXT_NOUNS = (
    rf"(?:{_NOUNS[3:-1]}|intro(?:duction)?s?|bios?|blurbs?|essays?|drafts?|copy|wording"
    r"|sentences?|lines?|lyrics|poems?|verses?|stor(?:y|ies)|captions?|speech(?:es)?|cover\s+letter"
    r"|resumes?|cvs?|profiles?|about\s+(?:section|page)|handbook|wiki|faq|guide|review|slides?"
    r"|minutes|agenda|screenplay|scenes?|dialogues?|chapters?|drafts?|transcripts?|recipes?)"
)
"""What a text is called ("my colleague's intro", "the handbook"): the object of a task on a
text."""
_SOURCE_NOUNS = (
    r"(?:reddit|subreddit|r/\w+|twitter|tweet|linkedin|facebook|instagram|tiktok|youtube|forum"
    r"|blog|site|website|wiki|slack|discord|group\s+chat|podcast|book|novel|chapter|song|album"
    r"|movie|film|show|episode|interview|example|sample|template|input|source|dream|nightmare"
    r"|horoscope|fortune|prophecy|voicemail|translation|subtitles?|chatbot|bot|radio|tv|billboard"
    r"|ad|flyer|poster|sign|meme|viral|motto|slogan|tagline|quote|prompt|character|narrator"
    r"|scene|verse|chorus|hook|bridge|stanza)"
)
"""Where a text comes from, or what it is part of ("a subreddit", "the form", "a song")."""
_HANDOVER = (
    r"(?:found|find|saw|seen|spotted|read|came\s+across|stumbled\s+(?:on|upon|across)|copied"
    r"|copying|copy-?pasted|pasted|pasting|paste|forwarded|forwarding|forward|received|got"
    r"|quoting|quoted|quote|sharing|shared|share|attaching|attached|grabbed|pulled|clipped"
    r"|overheard|heard|transcribed|transcript|excerpt|extract|snippet|via|per|according\s+to"
    r"|courtesy\s+of|straight\s+from|taken\s+from|from\s+(?:the|a|an|our|their|his|her|my|this)"
    r"|posted|tweeted|wrote|written|said|says|sent|sends|scribbled|typed|jotted|drafted|texted"
    r"|messaged|emailed|verbatim|unedited|word\s+for\s+word)"
)
"""Words that announce material taken from somewhere else."""
_HANDS_OVER = _rx(rf"\b{_HANDOVER}\b")
_HANDS_OVER_ALONE = _rx(
    r"\b(?:pasting|pasted|copy-?pasted|copied|copying|quoting|quoted|forwarded|forwarding|fwd|fw"
    r"|transcribed|verbatim|unedited|word\s+for\s+word|excerpt|according\s+to|courtesy\s+of"
    r"|straight\s+from|taken\s+from|overheard)\b"
    r"|^\W*(?:from|by|via)\s+(?:my|our|the|a|an|some)\s+(?!(?:way|time|moment|looks?|sound|end"
    r"|start|beginning|look|days?|weeks?|years?|morning|evening|night)\b)[\w'-]+(?:\s+[\w'-]+)?\W*$"
)
"""Handover words that need nothing more ("Pasting the handbook:", "Fwd from my landlord —"),
or a lead-in that is only its source ("From my landlord:"); "found", "got", "saw" need a
pointer or a source ("Found this on a forum:", not "Found a new job!")."""
_THIRD_VOICE = _rx(
    r"^\W*(?:(?!i\b|we\b|you\b)(?:he|she|they|someone|somebody|everyone|people|(?:my|our|the|a"
    r"|his|her|their)\s+[\w-]+|(?-i:[A-Z][\w-]+))\s+(?:\w+\s+){0,3}?(?:was\s+like|is\s+like|goes"
    r"|went|says?|said|reckons?|thinks?|thought|believes?|claims?|keeps?\s+(?:saying|telling)"
    r"|tells?|told|writes?|wrote|posted|tweeted|replied|answered|asked|added|insists?|swears?"
    r"|quoth|notes?|noted|feels?|felt|scribbled|typed|jotted|texted|messaged|emailed|commented"
    r"|put))\b"
)
"""Someone else speaking or thinking ("My roommate was like", "Dana reckons"): what they say
follows."""
_SOMEONE_ELSES_TEXT = _rx(
    r"\b(?:it's|it\s+is|this\s+is|these\s+are|that's|here's|here\s+is)\s+(?:\w+\s+){0,3}?"
    rf"(?!(?:it|that|what|here|there|let|he|she|who|one)'s\b)[\w-]+'s?\s+(?:[\w-]+\s+)?"
    rf"{_TEXT_NOUNS}\b[^.!?:\n]{{0,60}}(?:[.!?]|:(?!\d)|\n|$)"
)
"""A sentence that names someone else's text ("it's the new contractor's intro from Slack"):
that text follows."""
_ANNOUNCE = _rx(
    r"(?:^|(?<=[.!?]\s)|(?<=\n))[ \t]*(?:(?:ok|okay|so|and|also|hey|hi|btw|fyi)[,\s]+)*"
    r"(?:(?:i|we)(?:'ve|\s+have)?\s+(?:just\s+)?)?"
    r"(?:found|saw|spotted|came\s+across|stumbled\s+(?:on|upon|across)|copied|copying|pasting"
    r"|pasted|forwarding|quoting|sharing|attaching|transcribing|dumping|dropping)\b"
    rf"(?=[^.!?:\n]{{0,100}}\b(?:this|these|that|the\s+following|below|here"
    rf"|{_TEXT_NOUNS[3:-1]})\b)"
    r"[^.!?:\n]{0,100}(?:[.!]|:(?!\d)|\n|$)",
    re.IGNORECASE | re.MULTILINE,
)
"""A sentence that hands material over ("Pasting the team handbook.", "Found this on a
forum"): what follows it is that material."""
_POINTED_HANDOVER = _rx(
    r"(?:^|(?<=[.!?]\s)|(?<=\n))[^.!?:\n]{0,80}?\b(?:posted|shared|sent|forwarded|wrote|found"
    r"|saw|spotted|got|received|copied|pasted|dropped|left|put)\b[^.!?:\n]{0,40}?\b(?:this|these"
    r"|the\s+following|below|here)\b[^.!?:\n]{0,80}(?:[.!?]|:(?!\d)|\n|$)",
    re.IGNORECASE | re.MULTILINE,
)
"""A sentence saying someone handed this material over ("Someone posted this in the thread,
thoughts?", "My boss sent me these"): it follows."""
_NAMED_TEXT = _rx(
    r"(?:^|(?<=[.!?]\s)|(?<=\n))[ \t]*(?:[\w'-]+\s+){0,3}?(?:transcript|minutes|notes|e-?mail"
    r"|draft|memo|letter|excerpt"
    r"|snippet|thread|post|review|bio|intro|script|scene|lyrics|poem|story|log|output|text"
    r"|chapter|page|excerpt|recap|summary|manuscript|screenplay|verse|song|draft)"
    r"(?:\s+(?:of|from|by|for|below|above|i\s+got|we\s+got)\b|\s*[\u2014\u2013-]\s|\s*[:.(]"
    r"|\s*$)"
    r"[^.!?:\n]{0,100}(?:[.!?]|:(?!\d)|\n|$)",
    re.IGNORECASE | re.MULTILINE,
)
"""A sentence that opens by naming a text ("Auto transcript of the vendor call — …"): it
follows."""
_THEIR_TEXT = _rx(
    r"\b(?:(?!(?:it|that|what|here|there|let|he|she|who|where|name|how|one|today|now)'s\b)"
    r"[\w-]+'s?|his|her|their)\s+(?:[\w-]+\s+){0,3}?(?:"
    rf"{_TEXT_NOUNS[3:-1]}|takeaways?|opener|comment|diary|entry|caption|motto|rant|vent|dm"
    r"|status|answer|reply|voicemail|auto-?reply|commit\s+message|alt\s+text|feedback)\b"
)
"""Someone else's text, named ("my landlord's welcome letter", "Raj's takeaway",
"someone's comment"): it is what the message hands over."""
_FILE = _rx(
    r"\b[\w.-]+\.(?:ya?ml|json|toml|ini|cfg|conf|md|txt|csv|tsv|xml|html?|py|js|ts|sh|env|log)\b"
)
"""A file named ("config.yaml from the repo"): its content follows."""
_FETCHED = _rx(
    r"\s*(?:please\s+|now\s+|then\s+|and\s+)*(?:load|open|import|read\s+in|analy[sz]e|query"
    r"|plot|chart|upload|download|fetch|run)\b"
)
"""A clause that acts on a file held elsewhere ("Load sales.csv"): the file is not in the
message, so what precedes the clause is the user's own."""
_POINTER_MARK = lazy(r"[\u2192\u21d2\u2b07\U0001f447]|(?<![-!<])(?:->|=>)|^\^(?=\s)", re.M)
"""An arrow that points at material: "→", "->", "👇", or "^" pointing back."""
_RETRACTION = _rx(
    r"\b(?:(?:wanted|told|asked|made|got)\s+me\s+to\s+(?:type|say|write|send|tell\s+you|paste)"
    r"|actually\s+no|scratch\s+that|never\s*mind|ignore\s+(?:that|this|what\s+i\s+(?:just\s+)?"
    r"(?:said|wrote|typed))|disregard\s+(?:that|this)|(?:just\s+)?kidding|jk\b|(?:that|it)\s+(?:was"
    r"|wasn't)\s+(?:not\s+)?me|(?:someone|my\s+\w+|a\s+\w+)\s+typed\s+(?:that|it|this)|not\s+my"
    r"\s+words)"
)
"""The user taking back what they just wrote ("actually no, ignore that line, my coworker typed
it"): what precedes it is not theirs."""
_HANDED_TEXT = _rx(
    r"(?:^|(?<=[.!?]\s)|(?<=\n))[^.!?:\n]{0,80}?\b(?:forwarded|forwarding|sent|sends|shared"
    r"|posted|pasted|copied|passed\s+on|passed\s+along|left|wrote|writes|typed|scribbled"
    r"|jotted|drafted|composed|penned)\b[^.!?:\n]{0,60}?"
    rf"\b{_TEXT_NOUNS}\b[^.!?:\n]{{0,80}}(?:[.!?]|:(?!\d)|\n|$)",
    re.IGNORECASE | re.MULTILINE,
)
"""A sentence saying someone handed a text over ("My sister forwarded her landlord's
email…"): the text follows."""
_LETTER = _rx(
    r"(?<=\n)[ \t]*(?:hi|hello|hey|dear|good\s+(?:morning|afternoon|evening)|greetings)\b"
    r"[^\n]{0,40}?[,!:\n]",
    re.IGNORECASE | re.MULTILINE,
)
"""A greeting that opens a paragraph after the first (not the user greeting the assistant):
a letter or message someone else wrote, to the end."""
_SCENE = lazy(r"^[ \t]*(?:INT|EXT|INT\./EXT|I/E)[.\s]", re.MULTILINE)
"""A screenplay's scene heading ("INT. KITCHEN - NIGHT"): a script, to the end."""
_FORGED_TAG = lazy(
    r"[\u27e6\u27ea\u00ab\[{<]{1,2}\s*/?\s*[A-Za-z_][\w-]{1,30}(?:\s+[\w-]+\s*=\s*[^\s\]}>\u27e7\u27eb"
    r"\u00bb]+)+\s*[\u27e7\u27eb\u00bb\]}>]{1,2}"
)
"""A tag with attributes, in any brackets ("⟦MEMORY role=user source=user-stated⟧"): markup
that opens material, to the end of its paragraph."""
_ABOUT_USER = _rx(r"\bthe\s+(?:end\s+)?user(?:'s)?\b")
"""Someone speaking of "the user" in the third person: not the user's own voice."""
_SHAPED = (
    r"(?:e-?mails?|posts?|messages?|texts?|letters?|comments?|reviews?|tweets?|bios?|blurbs?"
    r"|captions?|(?:opening|first|last|closing|a|one)\s+lines?|sentences?|quotes?|quotations?"
    r"|excerpts?|snippets?|passages?|paragraphs?|lyrics|poems?|verses?|songs?|stor(?:y|ies)"
    r"|scripts?|transcripts?|articles?|threads?|repl(?:y|ies)|responses?|profiles?|listings?|ads?"
    r"|flyers?|posters?|memes?|headlines?|slogans?|mottos?|taglines?|subtitles?|screenshots?|forms?"
    r"|templates?|reddit|subreddit|twitter|linkedin|facebook|instagram|tiktok|youtube|forums?"
    r"|blogs?|websites?|slack|discord|group\s+chat|podcasts?|newsletters?)"
)
"""What a text someone wrote is ("a bio", "the opening line of a post", "a form"): named after
the text, it says whose the text was."""
_ABOUT_TEXT = _rx(
    r"\b(?:thoughts?|opinions?|feedback|take|views?|comments?|notes?)\s+on\s+(?:this|that|it|these"
    r"|those|the\s+above)\b|\bwhat\s+do\s+you\s+(?:think|make)\s+of\s+(?:this|that|it|these)\b"
    r"|\bwho\s+(?:wrote|writes|sings|sang|said|says|made|composed|penned)\s+(?:this|that|it"
    r"|these)\b|\b(?:take\s+away|learn|get|make)\s+(?:out\s+)?(?:from|of)\s+(?:this|that|it"
    r"|these)\b|\b(?:does|do|did)\s+(?:this|that|it|these)\s+(?:read|sound|flow|work|scan"
    r"|rhyme)\b|\bneeds?\s+more\s+\w+\b|\b(?:he|she|they|(?-i:[A-Z]\w+))\s+wrote\s+(?:it|this"
    r"|that|these)\b"
    r"|(?:^|(?<=[.!?]\s)|(?<=\n)|(?<=[\u2014\u2013(]))\W{0,3}(?:that|this|these|those|it|above)(?:'s"
    r"|'re|\s+(?:is|was|are|were|came|comes))\s+(?:(?!(?:my|our)\s+(?![\w-]+'s\b))[\w'-]+\s+){0,5}?"
    rf"(?<!\bmy\s)(?<!\bour\s){_SHAPED}\b"
    rf"|\b(?:this|that|these|those)\s+(?:[\w'-]+\s+){{0,2}}?{_SHAPED}\s+(?:from|on|off|in|of|by"
    r"|i\s+(?:saw|found|got|read|copied|received))\b"
)
"""A question or remark about a text the message holds ("thoughts on this?", "who sings
this?", "She wrote it herself", "That's the opening line of a bio I saw", "why does this text
from the form look so wide?"): the text is what precedes it."""
_ATTRIBUTION = lazy(
    r"(?<=\S)[ \t][\u2014\u2013~-]{1,2}[ \t]*(?:[A-Z][\w.'-]+|@\w+)(?:[ \t]+[A-Z][\w.'-]+)?"
    r"[ \t]*(?:,[^\n]{0,40})?$",
    re.MULTILINE,
)
"""A line signed by someone ("I always pay in cash — Dana"): theirs."""
_ENV_LINE = lazy(r"^[ \t]*(?:export[ \t]+)?[A-Z][A-Z0-9_]{2,}[ \t]*=[^\n]*$", re.MULTILINE)
"""A setting (``OWNER_NOTE=…``, ``.env``): data."""
_LINE_PREFIX = lazy(r"^[ \t]*([^\w\s\-*\u2022+(\[]{1,3})[ \t]?\S", re.MULTILINE)
_ABOUT_USER_ELSEWHERE = lazy(
    fold_pattern(
        "(?:l'utilisateur|der nutzer|die nutzerin|der benutzer|el usuario|la usuaria|l'utente"
        "|o usuario|o utilizador|пользовател|kullanici|사용자|用户|使用者|ユーザー|de gebruiker"
        "|uzytkownik|pengguna|nguoi dung|anvandaren|उपयोगकर्ता|المستخدم|χρηστη)"
    )
)
"""The user spoken of in the third person, in other languages."""
_ROLEPLAY = _rx(
    r"\b(?:i'?m|i\s+am|i'll\s+be|let\s+me\s+be)\s+(?:playing|going\s+to\s+play|pretending\s+to\s+be"
    r"|in\s+character\s+as)\b|\byou(?:'re|\s+are|'ll\s+be)\s+(?:the|a|an|my|playing)\s+\w+"
    r"|\b(?:role-?play|improv|stay\s+in\s+character|in\s+character|let'?s\s+pretend|act\s+as"
    r"|let'?s\s+practi[sc]e|rehears\w*|audition)\b"
)
"""A role-play set up ("You're the barkeep, I'm a pirate called Redbeard"): what follows is
played, to the end."""
_SOURCED = _rx(
    r"(?:^|(?<=[.!?]\s)|(?<=\n))[ \t]*(?:according\s+to|as\s+per|per|based\s+on|going\s+by"
    r"|judging\s+by|from\s+what)\b[^.!?\n]{0,120}?(?=\b(?:i|we|my|our)\b)"
)
"""A sentence that opens with its source ("According to the profile page … I prefer…"): the
rest of it is that source's."""
_PREAMBLE = lazy(
    r"(?:^|(?<=\n)|(?<=[.!?][ \t]))(?P<pre>[^\n.!?:\"\u201c\u201d]{1,120}?)"
    r"(?P<sep>[ \t]*(?::|[\u2014\u2013]|\s-|,|[.!?])[ \t]+|[ \t]*\n"
    r"(?:[ \t]*\n)*[ \t]*)(?=(?i:i|i'm|i've|i'd|i'll|we|we're|we've|my|our)\b)",
)
"""A short preamble before the first person ("Viral tweet going around today — I only bank
with…", "Some guy on the forum posted, I keep…", "Eulogy draft v2\n\nI live in…")."""
_LATEX = lazy(r"\\begin\{(\w+)\}.*?(?:\\end\{\1\}|\Z)", re.DOTALL)
_SUBTITLE = lazy(r"^\d{1,2}:\d\d:\d\d[,.]\d{1,3}\s*-->[^\n]*\n", re.MULTILINE)
_CSV_HEADER = lazy(r"^[ \t]*\w+(?:,\w+)+[ \t]*\n", re.MULTILINE)
_SIGNATURE = lazy(r"^[ \t]*[\u2014\u2013~-]{1,2}[ \t]*(?:[A-Z][\w.'-]+|@\w+)[^\n]{0,60}$", re.M)
_SPEECH_VERBS = (
    r"(?:quoth|said|says|wrote|writes|asked|asks|replied|replies|sang|sings|tells|told|whispers"
    r"|whispered|shouts|shouted|yells|yelled|explains|explained|adds|added|insists|insisted"
    r"|announces|announced|mutters|muttered|snaps|snapped|sighs|sighed|declares|declared|jokes"
    r"|joked|laughs|laughed|cries|cried|answers|answered|texted|texts|posted|posts|messaged)"
)
_TRAILING_SPEECH = _rx(
    rf",\s*(?:{_SPEECH_VERBS}\s+(?:the\s+|my\s+)?[\w'-]+|(?:he|she|they|(?:the|my|his|her|their"
    rf")\s+[\w'-]+|(?-i:[A-Z][\w'-]+))\s+(?:\w+ly\s+)?{_SPEECH_VERBS}\b)[^.!?\n]{{0,40}}"
    r"(?:[.!?]|[ \t]*$)",
    re.IGNORECASE | re.MULTILINE,
)
"""A speech tag after someone's words ("…, said the knight", "…, she tells the clerk"): the
words of the sentence before it are theirs."""
_MARKDOWN_LINK = lazy(r"\[[^\]\n]{1,300}\]\s*\((?:https?:|www\.|/|#)[^)\n]{0,500}\)")
_FIRST_PERSON_OWNER = _rx(r"\b(?:i|i'm|i've|i'd|my|me|myself|mine|we|we're|we've|our|ours|us)\b")
_MEMORY_REQUEST = _rx(
    r"\s*(?:(?:please|pls|ok|okay|so|and|also)[,\s]+)*(?:remember|note|record|save|store|keep"
    r"\s+in\s+mind|log|add|pin|jot\s+down|write\s+down|memori[sz]e)\b"
)
"""A lead-in that asks to remember what follows ("record this as a decision:"): the user's."""
_SOURCE = _rx(rf"\b(?:{_TEXT_NOUNS[3:-1]}|{_SOURCE_NOUNS[3:-1]}|proofread|into\s+\w+ian)\b")
"""A lead-in naming a text or where it comes from ("Lyrics:", "Reddit comment:")."""
_ROLE_LABELS = frozenset(
    """you me him her them user assistant ai bot narrator character speaker customer agent
    interviewer interviewee host guest caller q a""".split()
)
"""Labels of a script's speakers."""
_SELF_LABELS = frozenset(
    """update updates quick small tiny brief short note notes to self fyi btw ps p.s pps edit
    edited correction corrections context background about me reminder also ok okay so well
    anyway one more thing things two three four five a few some couple of facts details info
    status heads up for the record side question questions answer tldr tl dr summary of mine
    honestly actually seriously basically personally addendum follow up followup news bonus
    and but plus oh hey hi hello thanks re important urgent tip warning disclaimer caveat
    question goal goals plan plans idea ideas thought thoughts news big good bad great fun
    random life personal work home health money travel food diet""".split()
)
"""Words of a discourse label: "update:", "quick note:", "two things:" introduce the user's own
words."""
_LEAD_IN = _rx(
    r"(?:^|(?<=[.!?]\s)|(?<=\n))(?P<lead>(?:[^\n.!?:]|(?<=\d)[.:](?=\d)){1,100}?)"
    r"[ \t]*:(?=[ \t]|$|[^\x00-\x7f])",
    re.M,
)
"""``<lead-in>:`` at the start of a line or sentence (not "10:30" or "https:")."""
_SPEAKER = _rx(
    r"^[ \t>*_\-]*(?:[\[(][\d:.,\s]{1,20}[\])][ \t]*)?(?:\*\*|__)?"
    r"(?P<label>[^\W\d_][\w.'\- ]{0,30}?)(?:\*\*|__)?[ \t]*"
    r"(?:\([^)\n]{0,40}\))?[ \t]*:[ \t]*(?:\*\*|__)?(?:\S|$)",
    re.IGNORECASE | re.MULTILINE,
)
"""A line that starts with a speaker's label ("Dana: …", "**You:** …", "Q: …")."""
_CUE = lazy(
    r"^[ \t]*(?-i:[A-Z][A-Z'.-]+(?: [A-Z][A-Z'.-]+){0,2})[ \t]*(?:\([^)\n]{0,30}\))?$"
    r"(?=\n[ \t]*\S)",
    re.MULTILINE,
)
"""A screenplay's speaker cue: a name in capitals on a line of its own, its words below."""
_REQUEST = (
    r"(?:(?:ok|okay|so|and|also|now|hey|hi|then)[,\s]+)*(?:please[,\s]+|pls\s+|kindly\s+"
    r"|(?:can|could|would|will)\s+you\s+(?:please\s+|pls\s+|kindly\s+)?(?:help\s+(?:me\s+)?)?"
    r"|help\s+me\s+|i\s+(?:need|want|would\s+like|'d\s+like)\s+(?:you\s+)?to\s+"
    r"|(?:i|we)\s+need\s+help\s+(?:to\s+)?|let's\s+|mind\s+)?"
)
_ACTS = (
    rf"(?:{_TASKS[3:-1]}|tidy(?:\s+up)?|clean(?:ing)?\s+up|touch\s+up|tighten|trim|condense"
    r"|punch\s+up|spruce\s+up|redo|adapt|adjust|restructure|reformat|expand|lengthen|sum\s+up"
    r"|interpret|decode|decipher|read\s+(?:over|through)|look\s+over|go\s+over|shorten(?:ing)?"
    r"|summari[sz]ing|translating|proofreading|editing|rewriting|formatting|fixing|polishing)"
)
_TEXT_TASKS = (
    r"(?:tl;?\s?dr|tldr|eli5|gist\s+of|translat(?:e|ing)|proofread(?:ing)?|summari[sz](?:e|ing)|sum\s+up|paraphras(?:e|ing)"
    r"|rephras(?:e|ing)|reword(?:ing)?|spell[- ]?check|grammar[- ]?check|tidy(?:\s+up)?|shorten"
    r"(?:ing)?|condense|tighten|trim|punch\s+up|spruce\s+up|polish(?:ing)?|traduis|traduce"
    r"|traducir|ubersetze?)"
)
"""Tasks that only ever act on a text: no object needs naming ("Translate into Italian.")."""
_MEMORY_VERBS = r"(?:remember|note|keep|save|store|record|log|add|pin|forget|memori[sz]e)\b"
_ACT_ON_TEXT = _rx(
    rf"^[ \t]*{_REQUEST}(?:{_TEXT_TASKS}\b|(?:make|turn|get)\s+(?:this|it|that|these)\b"
    rf"|{_ACTS}\b[^.!?\n]{{0,80}}?\b(?:this|that|it|these|those|them|the\s+following|below"
    rf"|above|{_TEXT_NOUNS})\b"
    rf"|(?<=you\s|ase\s)(?!{_MEMORY_VERBS})\w+\b[^.!?\n]{{0,60}}?\b(?:this|these|the\s+following"
    rf"|below|above|(?:[\w-]+'s?\s+(?:[\w-]+\s+)?){_TEXT_NOUNS})\b)",
    re.IGNORECASE | re.MULTILINE,
)
"""A request to do something to a text ("Could you shorten my colleague's intro?")."""
_MEANING = _rx(
    r"\bwhat\s+(?:does|do|did|would|could)\s+[^?.!\n]{1,60}?\s+mean\b"
    r"|\bwhat'?s\s+the\s+meaning\s+of\b|\bwhat\s+is\s+meant\s+by\b"
    r"|\bhow\s+(?:would|do|does|did|should|could|can|to)\s+(?:[\w-]+\s+){0,4}?(?:say|phrase|word"
    r"|express|put|pronounce|spell|write|read|sing|translate)\s+(?:this|that|it|these)\b"
    r"|^\W*(?:rate|grade|score|judge|rank|critique|roast|review|assess|evaluate)\s+(?:this|these|that"
    r"|my|his|her|their|the)\b"
    r"|\bis\s+(?:this|that|it)\s+(?:grammatical|correct|right|good|ok|okay|clear|polite"
    r"|professional|well\s+written|too\s+long)\b"
)
_CREATE = _rx(
    r"\b(?:write|wrote|written|compose|composed|draft|drafted|continue|finish|complete|create"
    r"|created|generate|make\s+up|made\s+up|come\s+up\s+with|came\s+up\s+with"
    r"|imagine|pretend|role-?play)\s+(?:me\s+|us\s+)?(?:[\w'-]+\s+){0,3}?(?:stor(?:y|ies)|poems?|songs?|lyrics|verses?"
    r"|haikus?|limericks?|scripts?|dialogues?|scenes?|monologues?|role-?plays?|skits?|letters?"
    r"|e-?mails?|repl(?:y|ies)|responses?|speech(?:es)?|toasts?|bios?|intro(?:duction)?s?|posts?"
    r"|tweets?|captions?|ads?|reviews?|essays?|paragraphs?|messages?|cover\s+letters?|profiles?"
    r"|descriptions?|characters?|parod(?:y|ies)|jingles?|chants?|raps?|ballads?|sonnets?)\b"
)
"""A request to write something: what follows describes fiction or someone else's voice."""
_POINTS_BACK = _rx(r"\b(?:this|that|it|these|those|them|the\s+above|above)\b")
_REPORTED = _rx(
    r"(?P<who>\b(?:he|she|they|someone|somebody|everyone|everybody|people|nobody|(?:the|my|our"
    r"|his|her|their|a|an|this|that|some|one)\s+[\w'-]+)|(?-i:\b(?!(?:I|We|You|It|This|That|There)\b)[A-Z][\w'-]+))\s+(?:(?:just|then|always|once|also|even)\s+)?(?:says|said|tells|told"
    r"|writes|wrote|asks|asked|replies|replied|answers|answered|whispers|whispered|shouts"
    r"|shouted|yells|yelled|explains|explained|claims|claimed|mentions|mentioned|adds|added"
    r"|insists|insisted|announces|announced|sings|sang|texted|messaged|emailed|muttered|mutters"
    r"|was\s+like|is\s+like|goes(?=\s*[,:])|went(?=\s*[,:])|reckons|reckoned|thinks|thought"
    r"|believes|believed|keeps\s+(?:saying|telling\s+\w+)|kept\s+(?:saying|telling\s+\w+)|quoth"
    r"|feels|felt|swore|swears|writes\s+in|wrote\s+in"
    r"|whispers|murmured|murmurs|snapped|snaps|sighed|sighs|declared|declares|admitted|admits"
    r"|joked|jokes|boasted|boasts|swore|swears|confessed|confesses)\b"
    r"(?:\s+(?:me|us|him|her|them|everyone))?(?:\s+that)?[,:]?"
)
"""Someone speaking ("she said", "the knight says", "my boss told me"): their words follow."""
_QUOTE_MARKS = "\"'\u201c\u2018\u00ab\u201e\u300c\u300e"
_CLOSING = {
    '"': '"',
    "'": "'",
    "\u201c": "\u201d",
    "\u2018": "\u2019",
    "\u00ab": "\u00bb",
    "\u201e": "\u201c",
    "\u300c": "\u300d",
    "\u300e": "\u300f",
}
_HTML = _rx(
    r"<(?P<tag>p|div|span|h[1-6]|li|ul|ol|dl|dt|dd|table|tr|td|th|thead|tbody|blockquote|section"
    r"|article|header|footer|body|html|head|title|pre|code|em|strong|b|i|u|a|q|cite|small|mark"
    r"|main|nav|aside|figure|figcaption|label|button|form|textarea|template|script|style|meta|img"
    r"|br|hr|font|center|details|summary|caption)\b[^<>]{0,300}>"
)
_HEADING = lazy(r"^[ \t]{0,3}#{1,6}[ \t]+\S", re.MULTILINE)
_INLINE_CODE = lazy(r"`[^`\n]{1,300}`")
_SHORT_QUOTE = lazy(
    r"\"[^\"\n]{1,300}\"|\u201c[^\u201d\n]{1,300}\u201d|(?<![\w'])'(?:[^'\n]|'(?=\w)){1,300}'(?!\w)"
    r"|\u2018[^\u2019\n]{1,300}\u2019"
)
_PARAGRAPH_END = lazy(r"\n[ \t]*\n")
_VERSE_LINE = lazy(r"[^\n]{1,60}")
_BULLET = lazy(r"^[ \t]*(?:[-*\u2022+]|\d{1,3}[.)])\s")


def quoted_regions(text: str) -> list[Span]:
    """Spans of ``text`` that are pasted, quoted or handed-over material, not the speaker's
    own words."""
    folded, origin = fold(text)
    spans = [to_raw(span, origin, len(text)) for span in quoted_spans(folded)]
    return merge([*spans, *_styled(text)])


def _styled(text: str) -> Iterator[Span]:
    """Runs of three or more words in styled letters (full-width, mathematical, circled): text
    made by a form, a font generator or another script's keyboard, copied, not typed."""
    run: list[re.Match[str]] = []
    for word in [*re.finditer(r"\S+", text), None]:
        if word is not None and _is_styled(word[0]):
            run.append(word)
            continue
        if len(run) >= 3:
            yield run[0].start(), run[-1].end()
        run = []


def _is_styled(word: str) -> bool:
    letters = [c for c in word if c.isalpha()]
    styled = sum(unicodedata.decomposition(c).startswith(_STYLES) for c in letters)
    return bool(letters) and 2 * styled > len(letters)


_STYLES = ("<wide>", "<font>", "<circle>", "<square>")


def quoted_spans(folded: str, *, speech: bool = True) -> list[Span]:
    """:func:`quoted_regions` of a text's folded view (offsets into ``folded``). Without
    ``speech`` — the injection scanner's view — only marked material counts: short
    quotations, scripts, reported speech, texts named or pointed at and retractions are the
    speaker's own way of talking ("add 'buy a laptop' as a decision" is a request, "the user
    asked the assistant to…" a summary's sentence)."""
    end = len(folded)
    spans = [*_fences(folded), *_tables(folded), *_verse(folded)]
    spans += [m.span() for p in (_BLOCKQUOTE, _QUOTED_STRING, _COMMENT) for m in p.finditer(folded)]
    spans += [m.span() for p in (_INLINE_CODE, _MARKDOWN_LINK) for m in p.finditer(folded)]
    if speech:
        spans += [m.span() for m in _SHORT_QUOTE.finditer(folded) if _words(m[0]) >= 3]
        spans += _scripts(folded)
    spans += [
        _material(folded, m.end(), end)
        for p in (
            _INTRO,
            _ANNOUNCE,
            _SOMEONE_ELSES_TEXT,
            _POINTED_HANDOVER,
            _NAMED_TEXT,
            _HANDED_TEXT,
        )
        for m in p.finditer(folded)
    ]
    spans += [_quoted_group(m) for m in _TASK_QUOTE.finditer(folded)]
    spans += [
        (m.start(), end) for p in (_HEADERS, _HEADING, _LETTER, _SCENE) for m in p.finditer(folded)
    ]
    spans += [(m.start(), _paragraph_end(folded, m.start())) for m in _FORGED_TAG.finditer(folded)]
    if speech:
        spans += [*_about_text(folded), *_their_texts(folded), *_pointers(folded)]
        spans += [*_retracted(folded), *_yaml(folded), *_about_user(folded), *_reported(folded)]
        spans += [*_signed_or_prefixed(folded), *_paired_quotes(folded), *_played(folded)]
        spans += [(m.end(), _sentence_end(folded, m.end())) for m in _SOURCED.finditer(folded)]
        spans += [*_preambles(folded), *_formats(folded)]
    spans += [*_lead_ins(folded, speech), *_requests(folded)]
    spans += _markup(folded)
    return merge(s for s in spans if s[1] > s[0])


def _words(text: str) -> int:
    return len(re.findall(r"[^\W\d_]{2,}", text))


def _paragraph_end(folded: str, at: int) -> int:
    found = _PARAGRAPH_END.search(folded, at)
    return found.start() if found else len(folded)


def _material(folded: str, at: int, end: int) -> Span:
    """The material introduced at ``at``: up to ``end``, or only the quotation it opens with
    when it is one ("My colleague sent me this: '…' I've decided…")."""
    start = at + len(folded[at:]) - len(folded[at:].lstrip())
    closing = _CLOSING.get(folded[start : start + 1])
    if closing is not None:
        ends = re.compile(rf"{re.escape(closing)}(?!\w)").search(
            folded, start + 1, _paragraph_end(folded, start)
        )
        if ends is not None and folded[ends.end() :].strip():
            return at, ends.end()
    return at, end


def _lead_ins(folded: str, speech: bool) -> Iterator[Span]:
    """What follows a lead-in that is not the user's own label (see the module docstring);
    without ``speech``, a speaker's label ("You:", "Dana:") is not one."""
    for match in _LEAD_IN.finditer(folded):
        if not _introduces(match["lead"], speech=speech):
            continue
        line_end = folded.find("\n", match.end())
        rest = folded[match.end() : line_end if line_end >= 0 else len(folded)]
        end = len(folded) if not rest.strip() else _paragraph_end(folded, match.end())
        yield _material(folded, match.end(), end)


def _introduces(lead: str, *, speech: bool = True) -> bool:
    """Whether ``<lead>:`` introduces material rather than the user's own words: it names a
    handover ("found", "pasting", "from the"), someone else's ("Dana's", "his") or a text or
    source ("handbook", "lyrics", "a subreddit") — unless it asks to remember what follows."""
    if len(lead.split()) > 20 or _MEMORY_REQUEST.match(lead):
        return False
    found = (_HANDS_OVER_ALONE, _THEIR_TEXT, _SOURCE, _ACT_ON_TEXT, _MEANING, _CREATE, _THIRD_VOICE)
    if any(pattern.search(lead) for pattern in found):
        return True
    if _HANDS_OVER.search(lead) and (_POINTS_BACK.search(lead) or _SOURCE.search(lead)):
        return True
    return speech and lead.strip().casefold() in _ROLE_LABELS


def _speaker(label: str) -> bool:
    """Whether a line's label names a speaker ("Dana", "You", "Me", "Q") rather than the
    user's own heading ("Update", "My stack")."""
    words = set(re.findall(r"[\w'.]+", label.casefold()))
    if label.strip().casefold() in _ROLE_LABELS:
        return True
    if len(words) > 3 or words <= _SELF_LABELS or _MEMORY_REQUEST.match(label):
        return False
    return not _FIRST_PERSON_OWNER.search(label)


def _scripts(folded: str) -> Iterator[Span]:
    """From the first of two or more speaker lines to the end: a script, an interview,
    meeting notes, a screenplay ("ROSA" on a line of its own)."""
    starts = [m.start() for m in _SPEAKER.finditer(folded) if _speaker(m["label"])]
    starts += [m.start() for m in _CUE.finditer(folded)]
    starts.sort()
    if len(starts) >= 2:
        yield starts[0], len(folded)


def _requests(folded: str) -> Iterator[Span]:
    """The text a request acts on: inside its sentence, after a colon or in quotes; else what
    follows it; else, when it comes last and points back, what precedes it — when the pointer
    is bare ("what does this mean?") or what precedes is more than a sentence."""
    for sentence in _sentence_spans(folded):
        text = folded[sentence[0] : sentence[1]]
        found = _ACT_ON_TEXT.search(text) or _MEANING.search(text) or _CREATE.search(text)
        if found is None:
            continue
        inside = _INSIDE.search(text, found.end())
        if inside is not None:
            yield _material(folded, sentence[0] + inside.end(), len(folded))
        elif folded[sentence[1] :].strip():
            yield _material(folded, sentence[1], len(folded))
        elif _BARE_POINTER.search(text) or len(list(_sentence_spans(folded[: sentence[0]]))) > 1:
            yield 0, sentence[0]


_INSIDE = lazy(r":[ \t]*(?=\S)|[ \t](?=[\"\u201c\u2018\u00ab]|'\w)")
"""Where a request's own sentence hands the text over: after a colon, or at a quotation."""
_BARE_POINTER = _rx(
    r"\b(?:this|that|it|these|those|them|the\s+above|above)\b(?!\s+(?!(?:mean|means|sound"
    r"|say|says|read|reads|look|looks|is|are|for|to|into|in|more|less|a|an|the|up|down|please"
    r"|shorter|longer|better|clearer)\b)[a-z])"
)
"""A pointer with no noun of its own ("shorten this", "what does it mean"): not "this pancake
recipe", which may be a text the message does not hold."""


def _their_texts(folded: str) -> Iterator[Span]:
    """Someone else's text named, or a file: the material right after the name (a quotation,
    a parenthesis, or after a colon or dash: to the end); when nothing follows, what precedes."""
    found = [*_THEIR_TEXT.finditer(folded), *_FILE.finditer(folded)]
    for match in found:
        after = _AFTER_NAME.search(folded, match.end())
        start = _clause_start(folded, match.start())
        if after is not None and folded[after.end() :].strip():
            yield _material(folded, after.end(), len(folded))
        elif folded[:start].strip() and not _FETCHED.match(folded, start, match.start()):
            yield 0, start


_AFTER_NAME = lazy(r"[^\n(:\u2014\u2192\"'\u201c]*?(?:[(:\u2014\u2192]\s*|\n|(?=[\"'\u201c]))")
"""Where a named text's material starts: a parenthesis, a colon, a dash, an arrow, a line
break or a quotation after the name."""


def _pointers(folded: str) -> Iterator[Span]:
    """Material an arrow points at: what follows "→", or what precedes "^"."""
    for match in _POINTER_MARK.finditer(folded):
        if match.group(0) == "^":
            yield 0, match.start()
        else:
            yield match.end(), _paragraph_end(folded, match.end())


def _retracted(folded: str) -> Iterator[Span]:
    """What the user takes back: their paragraph up to the retraction."""
    for match in _RETRACTION.finditer(folded):
        start = folded.rfind("\n\n", 0, match.start())
        yield (0 if start < 0 else start), match.start()


_YAML_KEY = lazy(r"^[ \t]*[\w.-]+:[ \t]*\n(?:[ \t]+[-\w][^\n]*(?:\n|$))+", re.MULTILINE)


def _yaml(folded: str) -> Iterator[Span]:
    """A key followed by indented lines (YAML, a config): data."""
    for match in _YAML_KEY.finditer(folded):
        yield match.span()


def _preambles(folded: str) -> Iterator[Span]:
    """What follows a short preamble with no first-person subject that names a source, a text,
    a task or someone speaking: to the end of the paragraph."""
    for match in _PREAMBLE.finditer(folded):
        pre = match["pre"]
        if _QUOTATION_IN.search(pre):
            continue  # the quotation is the material; what follows is the user's
        words = set(re.findall(r"[\w'.]+", pre.casefold()))
        if len(words) > 15 or words <= _SELF_LABELS or _OWN_SUBJECT_WORD.search(pre):
            continue
        if not _introduces(pre):
            continue
        yield match.end(), _paragraph_end(folded, match.end())


_QUOTATION_IN = lazy(r"(?<![\w])['\u2018][^'\n]{2,}['\u2019](?![\w])")
_OWN_SUBJECT_WORD = _rx(r"\b(?:i|i'm|i've|i'd|i'll|we|we're|we've|let's)\b")


def _formats(folded: str) -> Iterator[Span]:
    """LaTeX environments, subtitles, CSV under a header, lines signed on the next line, and
    a sentence ending in someone's speech ("…, quoth the raven.")."""
    yield from (m.span() for m in _LATEX.finditer(folded))
    for match in _SUBTITLE.finditer(folded):
        yield match.start(), _paragraph_end(folded, match.start())
    for match in _CSV_HEADER.finditer(folded):
        end = match.end()
        while (line := folded[end:].split("\n", 1)[0]) and "," in line:
            end += len(line) + 1
        yield match.start(), min(end, len(folded))
    for match in _SIGNATURE.finditer(folded):
        start = folded.rfind("\n\n", 0, match.start())
        yield (0 if start < 0 else start), match.end()
    for match in _TRAILING_SPEECH.finditer(folded):
        yield _clause_start(folded, match.start()), match.end()


def _sentence_end(folded: str, at: int) -> int:
    end = _REPORT_END.search(folded, at)
    return end.start() if end else len(folded)


def _played(folded: str) -> Iterator[Span]:
    """What follows the sentence that sets a role-play up."""
    for match in _ROLEPLAY.finditer(folded):
        end = _REPORT_END.search(folded, match.end())
        yield (end.end() if end else len(folded)), len(folded)


def _about_user(folded: str) -> Iterator[Span]:
    """Sentences that speak of "the user" in the third person, in any language."""
    for sentence in _sentence_spans(folded):
        text = folded[sentence[0] : sentence[1]]
        if _ABOUT_USER.search(text) or _ABOUT_USER_ELSEWHERE.search(text.lower()):
            yield sentence


def _signed_or_prefixed(folded: str) -> Iterator[Span]:
    """Lines signed by someone, settings, and runs of two or more lines that open with the same
    mark ("» ", "| ", "// ")."""
    yield from (m.span() for m in _ENV_LINE.finditer(folded))
    for signed in _ATTRIBUTION.finditer(folded):
        yield folded.rfind("\n", 0, signed.start()) + 1, signed.end()
    run: list[re.Match[str]] = []
    for match in [*_LINE_PREFIX.finditer(folded), None]:
        if (
            match is not None
            and run
            and match[1] == run[-1][1]
            and _next_line(folded, run[-1], match)
        ):
            run.append(match)
            continue
        if len(run) >= 2:
            yield run[0].start(), folded.find("\n", run[-1].start()) % (len(folded) + 1)
        run = [match] if match is not None else []


def _next_line(folded: str, before: re.Match[str], after: re.Match[str]) -> bool:
    return folded.count("\n", before.start(), after.start()) == 1


def _paired_quotes(folded: str) -> Iterator[Span]:
    """Quotations between any opening and closing quotation marks (Unicode's initial and final,
    or open and close punctuation other than brackets) holding three words or more."""
    opened: list[int] = []
    for at, char in enumerate(folded):
        kind = unicodedata.category(char)
        if kind in ("Pi", "Ps") and char not in "([{":
            opened.append(at)
        elif kind in ("Pf", "Pe") and char not in ")]}" and opened:
            start = opened.pop()
            if _words(folded[start:at]) >= 3:
                yield start, at + 1


def _about_text(folded: str) -> Iterator[Span]:
    """What precedes a question or remark about a text the message holds."""
    for match in _ABOUT_TEXT.finditer(folded):
        start = _clause_start(folded, match.start())
        if folded[:start].strip():
            yield 0, start


_CLAUSE_MARKS = (". ", "? ", "! ", "\n", " \u2014 ", " - ", " (")


def _clause_start(folded: str, at: int) -> int:
    """Where the sentence or dash-separated clause holding ``at`` starts."""
    cut = max(folded.rfind(mark, 0, at) for mark in _CLAUSE_MARKS)
    return 0 if cut < 0 else cut + 1


def _reported(folded: str) -> Iterator[Span]:
    """Someone else's reported words: from the reporting verb to the end of the sentence."""
    for match in _REPORTED.finditer(folded):
        if folded[match.end() :].lstrip()[:1] not in _QUOTE_MARKS:
            end = _REPORT_END.search(folded, match.end())
            yield match.end(), end.start() if end else len(folded)


_REPORT_END = lazy(r"[.!?;](?=\s|$)|\n")


_ELEMENT = lazy(r"<(?P<tag>[A-Za-z][\w-]{0,30})(?:\s[^<>]{0,200})?>.*?</(?P=tag)\s*>", re.DOTALL)
"""An element of any name (``<memory>…</memory>``): markup."""


def _markup(folded: str) -> Iterator[Span]:
    """HTML elements: from the first opening tag to the last closing one (or the end); any
    element with its closing tag."""
    yield from (m.span() for m in _ELEMENT.finditer(folded))
    opening = _HTML.search(folded)
    if opening is None:
        return
    closings = [m.end() for m in re.finditer(r"</\s*[a-z][\w-]*\s*>", folded, re.IGNORECASE)]
    last = max((c for c in closings if c > opening.start()), default=len(folded))
    yield opening.start(), last


def _verse(folded: str) -> Iterator[Span]:
    """A poem or lyrics: four or more consecutive short lines without sentence punctuation, or
    three when one of them runs on (ends with a comma or starts in lower case)."""
    run: list[re.Match[str]] = []
    for line in [*_VERSE_LINE.finditer(folded), None]:
        if line is not None and _verse_line(line[0]) and _adjacent(folded, run, line):
            run.append(line)
            continue
        if len(run) >= 4 or (len(run) >= 3 and any(_runs_on(m[0]) for m in run)):
            yield run[0].start(), run[-1].end()
        run = [line] if line is not None and _verse_line(line[0]) else []


def _verse_line(line: str) -> bool:
    stripped = line.strip()
    return (
        bool(stripped)
        and not stripped.endswith((".", "?", ":"))
        and not _BULLET.match(line)
        and len(line) < 60
        and "\t" not in line
        and "|" not in line
        and len(re.findall(r"[^\W\d_]{2,}", line)) >= 2
    )


def _runs_on(line: str) -> bool:
    stripped = line.strip()
    return stripped.endswith((",", ";", "-")) or stripped[:1].islower()


def _adjacent(folded: str, run: list[re.Match[str]], line: re.Match[str]) -> bool:
    return not run or folded[run[-1].end() : line.start()] == "\n"


_SENTENCE = lazy(r"[^.!?\n]+(?:[.!?]+|\n|$)")


def _sentence_spans(folded: str) -> Iterator[Span]:
    for match in _SENTENCE.finditer(folded):
        if match[0].strip():
            yield match.start(), match.end()


def _quoted_group(match: re.Match[str]) -> Span:
    group = next(n for n in range(1, 5) if match.group(n) is not None)
    return match.span(group)


def _fences(folded: str) -> Iterator[Span]:
    position = 0
    while match := _FENCE.search(folded, position):
        closing = re.compile(rf"^[ \t]*{re.escape(match.group(1))}[ \t]*$", re.MULTILINE)
        line_end = folded.find("\n", match.end())
        after = closing.search(folded, line_end + 1) if line_end >= 0 else None
        end = after.end() if after else len(folded)
        yield match.start(), end
        position = max(end, match.end())


def _tables(folded: str) -> Iterator[Span]:
    """Runs of at least three lines that each hold a delimiter (CSV, TSV, tables): commas and
    semicolons not followed by a space (prose puts one after them), tabs, or two pipes;
    delimiters inside double-quoted cells do not count."""
    lines = [m.span() for m in re.finditer(r"[^\n]+", folded)]
    for delimiter in _DELIMITERS:
        run: list[Span] = []
        for start, end in [*lines, (len(folded), len(folded))]:
            if delimiter.search(_CELL_QUOTE.sub("", folded[start:end])):
                run.append((start, end))
                continue
            if len(run) >= 3:
                yield run[0][0], run[-1][1]
            run = []
