"""Writes crates/core/src/quiet/area_codes.tab: each US and Canadian area
code with the states or provinces and the time zones libphonenumber's
geocoding and time-zone data give its numbers.

    python3 -m venv /tmp/pn && /tmp/pn/bin/pip install phonenumbers==<version>
    /tmp/pn/bin/python scripts/area-codes.py > crates/core/src/quiet/area_codes.tab
"""

import collections
import re

import phonenumbers
from phonenumbers import timezone
from phonenumbers.geodata import GEOCODE_DATA

STATES = {
    "Alabama": "AL", "Alaska": "AK", "Arizona": "AZ", "Arkansas": "AR", "California": "CA",
    "Colorado": "CO", "Connecticut": "CT", "Delaware": "DE", "Florida": "FL", "Georgia": "GA",
    "Hawaii": "HI", "Idaho": "ID", "Illinois": "IL", "Indiana": "IN", "Iowa": "IA",
    "Kansas": "KS", "Kentucky": "KY", "Louisiana": "LA", "Maine": "ME", "Maryland": "MD",
    "Massachusetts": "MA", "Michigan": "MI", "Minnesota": "MN", "Mississippi": "MS",
    "Missouri": "MO", "Montana": "MT", "Nebraska": "NE", "Nevada": "NV", "New Hampshire": "NH",
    "New Jersey": "NJ", "New Mexico": "NM", "New York": "NY", "North Carolina": "NC",
    "North Dakota": "ND", "Ohio": "OH", "Oklahoma": "OK", "Oregon": "OR", "Pennsylvania": "PA",
    "Rhode Island": "RI", "South Carolina": "SC", "South Dakota": "SD", "Tennessee": "TN",
    "Texas": "TX", "Utah": "UT", "Vermont": "VT", "Virginia": "VA", "Washington": "WA",
    "Washington State": "WA", "West Virginia": "WV", "Wisconsin": "WI", "Wyoming": "WY",
    "Washington D.C.": "DC", "District of Columbia": "DC",
    "Alberta": "AB", "British Columbia": "BC", "British Colombia": "BC", "Manitoba": "MB",
    "New Brunswick": "NB", "Newfoundland and Labrador": "NL", "Nova Scotia": "NS",
    "Ontario": "ON", "Prince Edward Island": "PE", "Quebec": "QC", "Saskatchewan": "SK",
    "Northwest Territories": "NT", "Nunavut": "NU", "Yukon": "YT",
}


def regions(description):
    """The state or province codes a geocoding description names."""
    tail = re.search(r", ([A-Z]{2})$", description)
    if tail:
        return {tail.group(1)}
    return {STATES[part] for part in description.split("/") if part in STATES}


def main():
    places = collections.defaultdict(set)
    for prefix, names in GEOCODE_DATA.items():
        if not prefix.startswith("1") or len(prefix) < 4:
            continue
        npa = prefix[1:4]
        number = phonenumbers.parse(f"+1{npa}5550100")
        country = phonenumbers.region_code_for_number(number)
        if country not in ("US", "CA"):
            continue
        for region in regions(names.get("en", "")):
            places[npa].add(f"{country}-{region}")
    print("# area code\tplaces\ttime zones (libphonenumber " + phonenumbers.__version__ + ")")
    for npa in sorted(places):
        zones = set()
        for prefix, names in timezone.TIMEZONE_DATA.items():
            if prefix.startswith("1" + npa):
                zones.update(z for z in names if z != "Etc/Unknown")
        print(f"{npa}\t{','.join(sorted(places[npa]))}\t{','.join(sorted(zones))}")


if __name__ == "__main__":
    main()
