"""Alternatives of one kind: the editors, hosts, phones, banks, diets, cadences and dates people
choose between. A change the user states ("switched to Zed", "Obsidian these days", "got a
Pixel 9") updates the memory that names another of the same kind ("uses VS Code", "keeps notes
in Notion", "has a Samsung S22") though the sentences share no word and the packaged model
barely relates them (:mod:`.updates`).

A word list, kept short and common: a name it does not know leaves the decision to the
sentences' meaning, as before.
"""

from __future__ import annotations

import re
from functools import cache

from ..patterns import lazy

_KINDS = {
    "editor": """vs code|vscode|visual studio code|visual studio|vim|neovim|nvim|emacs|sublime|
        sublime text|zed|helix|pycharm|intellij|webstorm|goland|rider|xcode|
        android studio|eclipse|notepad\\+\\+|textmate|bbedit""",
    "host": """heroku|render|fly\\.io|railway|vercel|netlify|aws|amazon web services|gcp|
        google cloud|azure|digitalocean|digital ocean|hetzner|linode|ovh|cloudflare|
        github pages|firebase|supabase|kubernetes|k8s|ec2|cloud run|app engine""",
    "phone": """iphone|pixel|galaxy|samsung|oneplus|xiaomi|huawei|motorola|nokia|fairphone|
        android phone|redmi|oppo|sony xperia|xperia""",
    "bank": """barclays|starling|monzo|revolut|hsbc|lloyds|natwest|santander|chase uk|n26|
        halifax|nationwide|citi|citibank|wells fargo|bank of america|bunq|first direct|
        tsb|metro bank|capital one|schwab|fidelity|vanguard""",
    "notes": """notion|obsidian|evernote|logseq|onenote|roam|roam research|apple notes|
        google keep|joplin|anytype|simplenote|remnote""",
    "music": """spotify|apple music|tidal|deezer|youtube music|amazon music|soundcloud|
        pandora|qobuz|bandcamp""",
    "python packages": "poetry|uv|pip|pipenv|conda|mamba|pdm|rye|pip-tools",
    "javascript packages": "npm|pnpm|yarn|bun",
    "tracker": """jira|linear|asana|trello|clickup|monday\\.com|github issues|basecamp|youtrack|
        pivotal tracker""",
    "chat": "slack|microsoft teams|discord|mattermost|zulip|google chat|rocket\\.chat",
    "database": """postgres|postgresql|mysql|mariadb|sqlite|mongodb|mongo|clickhouse|snowflake|
        bigquery|redshift|dynamodb|cassandra|redis|duckdb|cockroachdb|planetscale|
        elasticsearch|opensearch""",
    "system": """linux|ubuntu|fedora|arch linux|debian|linux mint|windows|windows 11|windows 10|
        macos|mac|pop!_os|pop os|manjaro|nixos|chromeos|chromebook""",
    "browser": "chrome|firefox|safari|brave|vivaldi|opera|librewolf",
    "email": "gmail|outlook|proton mail|protonmail|fastmail|icloud mail|yahoo mail",
    "diet": """keto|paleo|vegan|vegetarian|pescatarian|pescetarian|mediterranean|carnivore|
        intermittent fasting|16:8|counting calories|calorie counting|whole30|low carb|
        low-carb|omnivore|flexitarian|dash diet|atkins|slimming world|weight watchers""",
    "commute": """bus|tube|train|car|bike|cycle|cycling|walk|walking|
        metro|subway|tram|scooter|e-bike|ebike|ferry""",
    "shift": """night shift|night shifts|day shift|day shifts|early shift|early shifts|
        late shift|late shifts""",
    "language": """spanish|italian|french|german|japanese|mandarin|chinese|cantonese|korean|
        portuguese|dutch|russian|arabic|hindi|polish|swedish|norwegian|danish|turkish|greek|
        hebrew|ukrainian|welsh|irish|finnish|czech|vietnamese|thai""",
    "relationship": "single|engaged|married|divorced|widowed|separated|dating|in a relationship",
    "employment": """freelance|freelances|freelanced|freelancer|freelancing|in-house|employed|
        self-employed|contractor|contracting|unemployed|full-time|part-time|retired""",
    "drink": """coffee|tea|green tea|black tea|matcha|decaf|espresso|herbal tea|rooibos|
        earl grey|yerba mate""",
    "streaming": "netflix|disney\\+|disney plus|hbo|prime video|hulu|apple tv|paramount\\+",
    "ci": "github actions|gitlab ci|circleci|jenkins|travis|buildkite",
    "code host": "github|gitlab|bitbucket|codeberg|sourcehut",
    "wearable": "apple watch|garmin|fitbit|whoop|oura|oura ring|coros|amazfit",
    "laptop": "macbook|macbook pro|macbook air|thinkpad|xps|framework laptop|zenbook",
    "reader": "kindle|kobo|nook|remarkable|boox",
    "airport": "heathrow|gatwick|stansted|luton|city airport|jfk|newark|laguardia|lax|sfo",
    "training": """5x5|stronglifts|starting strength|ppl|ppl split|push pull legs|
        upper lower|upper/lower|full body|full-body|bro split|531|5/3/1|crossfit""",
    "cadence": """daily|weekly|fortnightly|biweekly|bi-weekly|monthly|quarterly|yearly|
        annually|every day|every week|every other week|every two weeks|every month|
        twice a week|once a week|three times a week|twice a month|once a month""",
    "weekday": """monday|tuesday|wednesday|thursday|friday|saturday|sunday|mondays|tuesdays|
        wednesdays|thursdays|fridays|saturdays|sundays|weekend|weekends|weekdays""",
}
"""Each kind's names, as people write them (``|``-separated regular expressions)."""

_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
    "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_DATE = lazy(
    rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})|(?:{_MONTHS})\s+\d{{1,2}}"
    r"(?:st|nd|rd|th)?|(?:on\s+)?the\s+\d{1,2}(?:st|nd|rd|th))\b",
    re.IGNORECASE,
)
"""A day of the year ("14 June", "June 21st", "on the 3rd")."""


def _alternatives(names: str) -> str:
    """``names`` as one alternation, a space in a name matching any run of spaces."""
    return "|".join(r"\s+".join(name.split()) for name in names.split("|"))


@cache
def _patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Each kind's names as one pattern, compiled on first use."""
    return tuple(
        (kind, re.compile(rf"(?<![\w.+-])(?:{_alternatives(names)})(?![\w+-])", re.IGNORECASE))
        for kind, names in _KINDS.items()
    )


def kinds_named(text: str) -> frozenset[str]:
    """The kinds of alternatives ``text`` names ("The user uses Zed." → ``{"editor"}``)."""
    found = {kind for kind, pattern in _patterns() if pattern.search(text)}
    if _DATE.search(text):
        found.add("date")
    return frozenset(found)
