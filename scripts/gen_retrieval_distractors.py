#!/usr/bin/env python3
"""Writes distractor memories for the labelled retrieval sets in data/retrieval/ (issue #19).

A distractor is a plausible memory of SOMEONE ELSE: another user of the same agent, a colleague,
a relative, a customer. It is about the same kinds of things the personas' memories are about
(appointments, medication, shifts, on-call weeks, deliveries, flights, birthdays, bills, pets,
gardens, standing instructions, past conversations), so a store of 1k or 10k entries has many
near misses for every labelled query, but it never answers one: every distractor names its owner
(a first name no persona uses), is never first person, and is never equal to a persona memory.

Output: the store's import format (src/cli/jsonl_import.h), one object a line, ASCII:

  {"text": "Pascal's knee follow-up with Dr. Dahlberg is on August 27 at 10:00 am.",
   "metadata": {"persona": "distractor", "topic": "health", "shape": "appointment"},
   "source": "tool"}

The lines are an i.i.d. mix of the templates below, so any prefix is a fair sample: the first N
lines of a run with --count M >= N are exactly a run with --count N (checked by --check). Text
comes from this script's own templates and slot fillers and from WordNet 3.0 (Debian
`wordnet-base`, /usr/share/wordnet) through scripts/gen_corpora.py's reader: lemma pools (sports,
instruments, dishes, flowers, dog breeds, coffees and teas, capitals, ...), definitions of
familiar nouns and places, and example sentences. The random generator is gen_corpora's
SplitMix64 on its own stream, so the same seed, this script, gen_corpora.py and the same WordNet
files give byte-identical output with any Python 3.

Usage:
  scripts/gen_retrieval_distractors.py                        # 10,000 lines, seed 1919, into
                                                              # data/retrieval/distractors_10k.jsonl
  scripts/gen_retrieval_distractors.py --count 1000 --out /tmp/d1k.jsonl
  scripts/gen_retrieval_distractors.py --check                # fail unless the committed file is
                                                              # byte-identical to a fresh run and
                                                              # shares no text with a persona memory
Standard library only (plus scripts/gen_corpora.py next to this file).
"""
import argparse
import json
import os
import re
import sys

SCRIPTS_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, SCRIPTS_DIR)
import gen_corpora  # noqa: E402  (Rng, WordNet, Lexicon, check_import_line's limits)

DEFAULT_SEED = 1919
DEFAULT_COUNT = 10_000
MAX_COUNT = 100_000  # the importer's max_entries
PREFIX_CHECK = 1_000
STREAM = "retrieval-distractors"

# ----------------------------------------------------------------------------------------------
# Slot fillers, written for this project. No first name, surname or pet name here may occur as a
# word in a persona memory (validate() checks), so a distractor is never about a persona's people.

FIRST_NAMES = """Abel Adaeze Agnes Ahmet Aino Alba Aleksi Amani Anders Annika Arlo Astrid Aurelio
Beatriz Bodhi Bruno Calla Cecile Cyrus Dagny Darius Delphine Desmond Dilnoza Edgar Effie Elias Elif
Emil Esme Ezra Fabian Fenna Felix Florin Gemma Gideon Greta Gunnar Hamid Harriet Hugo Idris Ines
Ingrid Ione Isak Jasper Joaquin Jorinde Kalani Kasimir Kenji Kira Lars Leonie Linus Lorenzo Lucinda
Magnus Malik Marguerite Matthias Mireille Nadim Naledi Nico Niamh Odile Olamide Orla Oskar Paloma
Pascal Penelope Quentin Rafael Rania Rasmus Renata Rowan Ruben Saoirse Selim Signe Silas Solveig
Stellan Tamsin Teodor Thea Tobias Ulla Valentin Vera Viggo Wanjiru Wilhelmina Xavier Yara Yusuf
Zainab Zeno""".split()
SURNAMES = """Abernathy Achterberg Balogun Bergstrom Castellano Dahlberg Duarte Engel Esposito Falk
Ferreira Fontaine Gallo Greaves Grunewald Hagen Holloway Ibarra Ivanova Jablonski Jovanovic Juarez
Kaminski Karlsson Lacroix Lindahl Maddox Moretti Nakashima Novotny Oyelaran Pellegrini Quintero
Rasmussen Sauer Szabo Takahashi Thibault Urquhart Valdez Vasquez Wainwright Yilmaz
Zielinski""".split()
PET_NAMES = """Mochi Rufus Pickles Waffles Ziggy Olive Nacho Pippin Luna Scout Tofu Dumpling Pretzel
Juniper Bramble Noodle Sprocket Marzipan""".split()
AGENT_NAMES = ["the scheduling agent", "the travel agent bot", "the household assistant",
               "the shared family assistant", "the support agent"]
# Gender-neutral, so they fit any first name.
RELATIONS = ["cousin", "partner", "best friend", "neighbor", "roommate", "business partner",
             "sibling", "grandchild", "godchild", "stepchild", "oldest friend", "former colleague",
             "in-law", "spouse", "twin"]
JOBS = ["a pharmacist", "a civil engineer", "a dental hygienist", "a paralegal", "a bus driver",
        "a landscape architect", "a high-school librarian", "a radiology tech", "a pastry chef",
        "an electrician", "a data analyst", "a social worker", "a ferry captain", "a translator",
        "a veterinarian", "a physics teacher", "a wedding photographer", "a carpenter"]
TOWNS = ["Spokane", "Duluth", "Asheville", "Tacoma", "Albany", "Eugene", "Madison", "Savannah",
         "Halifax", "Sheffield", "Galway", "Utrecht", "Bergen", "Porto Alegre", "Ghent", "Bruges",
         "Tampere", "Gdansk", "Bologna", "Valencia", "Kalamazoo", "Boise", "Santa Fe", "Missoula"]
STREETS = ["Alder Street", "Birch Lane", "Cedar Avenue", "Dock Road", "Elmwood Court",
           "Foundry Street", "Garnet Way", "Harbor View Drive", "Iris Lane", "Juniper Court",
           "Kettle Road", "Linden Avenue", "Mill Pond Road", "Northgate Street", "Orchard Way"]
CLINICS = ["Riverbend Clinic", "Cedar Family Practice", "Northside Medical Group",
           "Lakeview Health", "Harbor Dental", "Maple Street Eye Care", "Summit Orthopedics",
           "Brookside Pediatrics", "Westgate Animal Hospital", "Pinecrest Vet Clinic"]
APPOINTMENTS = ["dental cleaning", "eye exam", "annual physical", "dermatology check",
                "allergy follow-up", "physical therapy session", "cardiology visit",
                "knee follow-up", "hearing test", "blood draw", "mammogram",
                "colonoscopy prep call",
                "flu shot", "MRI of the shoulder", "podiatry appointment", "sleep study"]
DRUGS = [("metformin", "500 mg"), ("lisinopril", "20 mg"), ("amlodipine", "5 mg"),
         ("omeprazole", "20 mg"), ("sertraline", "50 mg"), ("vitamin D", "2,000 IU"),
         ("magnesium glycinate", "200 mg"), ("loratadine", "10 mg"), ("rosuvastatin", "10 mg"),
         ("levetiracetam", "500 mg"), ("montelukast", "10 mg"), ("folic acid", "1 mg"),
         ("fish oil", "1,000 mg"), ("propranolol", "10 mg"), ("prednisone", "5 mg")]
DOSE_TIMES = ["every morning", "every evening", "at bedtime", "with breakfast", "with dinner",
              "twice a day", "on Mondays and Thursdays"]
ALLERGENS = ["shellfish", "sesame", "tree nuts", "sulfa drugs", "bee stings", "cats", "mold",
             "ragweed", "ibuprofen", "adhesive bandages", "soy", "mustard"]
REACTIONS = ["carries an EpiPen", "gets hives", "gets a rash within an hour",
             "ended up in urgent care once", "only mild itching", "takes an antihistamine first"]
CONDITIONS = [("mild asthma", "keep an inhaler in the car"),
              ("a bad left shoulder", "no overhead lifting at the gym"),
              ("low blood pressure", "stand up slowly in the morning"),
              ("plantar fasciitis", "wear the supportive sandals at home"),
              ("migraines with bright light", "keep sunglasses in every bag"),
              ("celiac disease", "check every menu for hidden wheat"),
              ("sciatica", "stretch for ten minutes before driving long distances"),
              ("a pacemaker", "avoid the airport body scanner and ask for a pat-down")]
WORKPLACES = ["the county hospital", "the distribution center", "the airport fuel depot",
              "the children's hospital", "the 24-hour pharmacy", "the call center",
              "the hotel front desk", "the water treatment plant", "the bakery on Dock Road",
              "the fire station", "the emergency vet", "the data center"]
TEAMS = ["search", "billing", "identity", "checkout", "notifications", "data platform",
         "mobile API", "storage", "fraud detection", "growth"]
SERVICES = ["the login service", "the checkout API", "the search cluster", "the image resizer",
            "the email queue", "the reporting database", "the mobile push gateway",
            "the billing worker", "the DNS resolver", "the CI runners"]
CAUSES = ["a certificate expired", "a config flag was flipped in the wrong region",
          "a disk filled up with logs", "a bad deploy", "a cloud provider network blip",
          "a runaway cron job", "a schema migration locked a table", "a dependency upgrade"]
MEETINGS = ["a team retro", "a budget check-in", "a design review", "choir practice",
            "a parent-teacher meeting", "a 1:1 with the director", "the HOA board meeting",
            "a volunteer orientation", "a vendor call", "a quarterly planning session"]
ROOMS = ["room 204", "the Birch conference room", "the library annex", "the back office",
         "Zoom", "the community hall", "the third-floor kitchen"]
DOCS = ["grant report", "safety plan", "quarterly forecast", "conference abstract",
        "renovation budget", "onboarding guide", "menu costing sheet", "lesson plan",
        "insurance claim", "thesis chapter", "inventory count", "vendor comparison"]
CERTS = ["food handler", "forklift", "CPR", "PALS", "project management", "scuba",
         "lifeguard", "commercial driver's", "teaching", "electrician's"]
BUSINESSES = ["bakery", "coffee cart", "food truck", "flower shop", "bike shop", "taqueria",
              "noodle bar", "bookshop", "catering company", "deli"]
PRODUCTS = ["flour", "milk and cream", "eggs", "cut flowers", "coffee beans", "tortillas",
            "fish", "produce", "paper goods", "ice", "bread", "cheese"]
SUPPLIERS = ["Harvest Lane Foods", "Coastline Seafood", "Valley Dairy Co-op", "Bluestem Mills",
             "Metro Paper Supply", "Sunrise Wholesale", "Ridgeway Farms", "Copper Kettle Roasters"]
BILLS = ["rent", "mortgage", "car payment", "student loan payment", "phone bill",
         "electric bill", "daycare tuition", "gym membership", "storage unit fee",
         "internet bill", "water bill", "credit card minimum"]
INSURANCES = ["car", "renters", "homeowners", "dental", "pet", "umbrella", "life", "travel"]
GOALS = ["a new roof", "a trip to Japan", "a used camper van", "a down payment",
         "a wedding next fall", "a new laptop", "the kids' braces", "a sabbatical",
         "a kitchen remodel", "an emergency fund"]
TAX_ITEMS = ["quarterly estimated tax payment", "property tax installment",
             "business license renewal fee", "state tax return", "HSA contribution deadline"]
AIRLINES = ["AS", "DL", "UA", "AA", "B6", "WN", "AC", "BA", "KL", "LH", "TP", "IB"]
HOTELS = ["Harborlight Inn", "the Granary Hotel", "Casa Marina", "the Old Mill Lodge",
          "Hotel Stellan", "the Ferryman", "Alder House B&B", "the Lantern Hotel"]
SEASONS = ["spring", "summer", "autumn", "winter", "the shoulder season"]
CARS = ["Honda Fit", "Mazda 3", "Ford F-150", "Kia Niro", "Volvo V60", "Chevy Bolt",
        "Toyota Prius", "Hyundai Tucson", "VW Golf", "Nissan Leaf"]
DEVICES = ["laptop", "tablet", "smart thermostat", "e-reader", "hearing aids", "smartwatch",
           "baby monitor", "router", "phone"]
SETTINGS = ["large text and dark mode", "do-not-disturb from 10 pm to 7 am",
            "two-factor login with a hardware key", "automatic backups every night",
            "the screen locking after two minutes", "captions on for every video call",
            "location sharing with family only"]
BOOKS = ["The Overstory", "Middlemarch", "Project Hail Mary", "The Remains of the Day",
         "Braiding Sweetgrass", "A Gentleman in Moscow", "Piranesi", "The Secret History",
         "Olive Kitteridge", "Station Eleven", "The Dutch House", "Circe"]
INSTRUCTIONS = ["send reminders one day ahead, never the same morning",
                "never call before 9 am on weekends", "keep summaries to three bullet points",
                "write dates as day, month, year", "copy the accountant on anything about taxes",
                "use metric units for recipes", "ask before booking anything over $300",
                "draft emails in a formal tone", "read messages aloud instead of showing text",
                "never mention work topics after 7 pm", "round prices to the nearest dollar",
                "put travel bookings on the shared calendar", "reply in French when possible"]
DECISIONS = ["go with the cheaper quote", "wait until after the holidays",
             "rent instead of buying", "take the earlier flight", "skip the conference this year",
             "switch to the credit union", "repair rather than replace", "ask for a second opinion",
             "sign the one-year lease", "enroll in the evening class"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


class Slots:
    """Random slot fillers over one Rng and the WordNet lexicon."""

    def __init__(self, rng, lex):
        self.rng, self.lex = rng, lex

    def pick(self, seq):
        return self.rng.pick(seq)

    def name(self):
        return self.rng.pick(FIRST_NAMES)

    def two_names(self):
        a, b = self.rng.sample(FIRST_NAMES, 2)
        return a, b

    def surname(self):
        return self.rng.pick(SURNAMES)

    def date(self):
        return "%s %d" % (self.rng.pick(MONTHS), self.rng.between(1, 28))

    def time(self, lo=7, hi=20):
        hour = self.rng.between(lo, hi)
        minute = self.rng.pick([0, 0, 15, 30, 45])
        suffix = "am" if hour < 12 else "pm"
        return "%d:%02d %s" % ((hour - 1) % 12 + 1, minute, suffix)

    def amount(self, lo, hi, step=5):
        return "${:,}".format(self.rng.between(lo // step, hi // step) * step)

    def weekday_pair(self):
        a, b = sorted(self.rng.sample(range(7), 2))
        return WEEKDAYS[a] + "s", WEEKDAYS[b] + "s"

    def code(self, length=6):
        letters = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
        return "".join(self.rng.pick(letters) for _ in range(length))

    def wn(self, pool):
        return self.rng.pick(self.lex[pool])


def poss(name):
    return name + "'s"


def article(word):
    return ("an " if word[0].lower() in "aeiou" else "a ") + word


# ----------------------------------------------------------------------------------------------
# Templates. Each takes Slots and returns (topic, text, source); the shape is the function name.

def appointment(s):
    return "health", "%s %s with Dr. %s is on %s at %s." % (
        poss(s.name()), s.pick(APPOINTMENTS), s.surname(), s.date(), s.time(8, 17)), "tool"


def appointment_clinic(s):
    return "health", "%s: %s at %s, %s, %s. Bring the insurance card." % (
        s.name(), s.pick(APPOINTMENTS), s.pick(CLINICS), s.date(), s.time(8, 17)), "tool"


def medication(s):
    drug, dose = s.pick(DRUGS)
    return "health", "%s takes %s of %s %s." % (s.name(), dose, drug, s.pick(DOSE_TIMES)), "agent"


def allergy(s):
    allergen = s.pick(ALLERGENS + [s.wn("fruit"), s.wn("spice")])
    return "health", "%s is allergic to %s and %s." % (
        s.name(), allergen, s.pick(REACTIONS)), "agent"


def condition(s):
    what, advice = s.pick(CONDITIONS)
    return "health", "Agent note for %s: %s, so %s." % (s.name(), what, advice), "agent"


def pet_dog(s):
    return "pets", "%s %s, %s, eats %s twice a day and is due for shots in %s." % (
        poss(s.name()), s.wn("dog_breed"), s.pick(PET_NAMES),
        s.pick(["half a cup", "3/4 of a cup", "a cup", "a cup and a half"]),
        s.pick(MONTHS)), "agent"


def pet_vet(s):
    return "pets", "%s, %s cat, sees the vet at %s on %s at %s for %s." % (
        s.pick(PET_NAMES), poss(s.name()), s.pick(CLINICS[-2:]), s.date(), s.time(9, 18),
        s.pick(["a dental cleaning", "her yearly shots", "a weight check", "an ear infection",
                "bloodwork"])), "tool"


def birthday(s):
    a, b = s.two_names()
    return "family", "%s %s %s has a birthday on %s; %s likes %s." % (
        poss(a), s.pick(RELATIONS), b, s.date(), b, s.pick([
            "a good " + s.wn("dessert"), "a good " + s.wn("cake"), "books about " + s.wn("sport"),
            "anything with " + s.wn("flower") + " in it",
            "anything with " + s.wn("fruit"), "gift cards"])), "tool"


def relative(s):
    a, b = s.two_names()
    return "people", "%s %s, %s, lives in %s and works as %s." % (
        poss(a), s.pick(RELATIONS), b, s.pick(TOWNS), s.pick(JOBS)), "agent"


def call_routine(s):
    a, b = s.two_names()
    return "people", "%s calls %s %s %s every %s at %s." % (
        a, "their", s.pick(RELATIONS), b, s.pick(WEEKDAYS), s.time(8, 21)), "agent"


def visit(s):
    a, b = s.two_names()
    month = s.pick(MONTHS)
    day = s.rng.between(1, 20)
    return "family", "%s is visiting %s from %s, %s %d-%d, and will stay in the %s." % (
        b, a, s.pick(TOWNS), month, day, day + s.rng.between(2, 8),
        s.pick(["guest room", "basement", "spare room", "camper", "hotel down the street"])), "tool"


def sport_days(s):
    d1, d2 = s.weekday_pair()
    return "routine", "%s does %s on %s and %s at %s." % (
        s.name(), s.wn("sport"), d1, d2, s.time(6, 19)), "agent"


def running(s):
    return "routine", "%s runs %d miles with the %s running club every %s morning, %s pace." % (
        s.name(), s.rng.between(3, 14), s.pick(TOWNS), s.pick(WEEKDAYS),
        "%d:%02d" % (s.rng.between(7, 12), s.rng.between(0, 59))), "agent"


def instrument(s):
    return "hobby", "%s practices the %s for %d minutes after dinner and has a lesson on %ss." % (
        s.name(), s.wn("instrument"), s.pick([15, 20, 30, 45]), s.pick(WEEKDAYS)), "agent"


def morning_drink(s):
    return "preference", "%s starts the day with %s and switches to %s tea after lunch." % (
        s.name(), s.pick(s.lex["coffee"] + s.lex["tea"]), s.wn("herb")), "agent"


def favorite_dish(s):
    return "preference", "%s favorite dish is %s; they order it at a place on %s." % (
        poss(s.name()), s.wn("dish"), s.pick(STREETS)), "agent"


def food_dislikes(s):
    return "preference", "%s won't eat %s and thinks %s is overrated." % (
        s.name(), s.wn("vegetable"), s.wn("fruit")), "agent"


def recipe(s):
    return "conversation", "%s %s recipe calls for %s, %s and a little %s." % (
        poss(s.name()), s.pick(s.lex["dessert"] + s.lex["cake"]), s.wn("fruit"), s.wn("spice"),
        s.wn("herb")), "agent"


def shift(s):
    return "work", "%s works %s shifts at %s, %s to %s, %s through %s." % (
        s.name(), s.pick(["night", "day", "evening", "12-hour", "weekend"]), s.pick(WORKPLACES),
        s.time(5, 9), s.time(15, 20), s.pick(WEEKDAYS[:3]), s.pick(WEEKDAYS[3:])), "agent"


def on_call(s):
    a, b = s.two_names()
    return "work", "%s is primary on call for the %s team the week of %s; %s is secondary." % (
        a, s.pick(TEAMS), s.date(), b), "tool"


def incident(s):
    return "work", "%s team had an outage on %s: %s was down for %d minutes after %s." % (
        poss(s.name()), s.date(), s.pick(SERVICES), s.rng.between(4, 180), s.pick(CAUSES)), "agent"


def meeting(s):
    return "work", "%s has %s every %s at %s in %s." % (
        s.name(), s.pick(MEETINGS), s.pick(WEEKDAYS), s.time(8, 19), s.pick(ROOMS)), "tool"


def deadline(s):
    return "work", "%s needs to finish the %s by %s and send it to %s %s." % (
        s.name(), s.pick(DOCS), s.date(), s.name(), s.surname()), "agent"


def certification(s):
    return "work", "%s %s certification expires in %s %d; the renewal class costs %s." % (
        poss(s.name()), s.pick(CERTS), s.pick(MONTHS), s.rng.between(2024, 2028),
        s.amount(40, 400)), "agent"


def delivery(s):
    return "work", "%s %s gets %s from %s every %s before %s." % (
        poss(s.name()), s.pick(BUSINESSES), s.pick(PRODUCTS), s.pick(SUPPLIERS), s.pick(WEEKDAYS),
        s.time(5, 10)), "tool"


def staff(s):
    return "work", "%s manages %d people at the %s; payroll goes out every other %s." % (
        s.name(), s.rng.between(3, 40), s.pick(BUSINESSES), s.pick(WEEKDAYS[:5])), "agent"


def bill(s):
    return "finance", "%s %s of %s is due on the %s of each month." % (
        poss(s.name()), s.pick(BILLS), s.amount(30, 3200),
        s.pick(["1st", "3rd", "5th", "10th", "12th", "15th", "20th", "25th", "28th"])), "tool"


def renewal(s):
    return "finance", "%s %s insurance renews on %s; last premium was %s." % (
        poss(s.name()), s.pick(INSURANCES), s.date(), s.amount(90, 2400)), "tool"


def savings(s):
    return "finance", "%s puts %s a month aside for %s." % (
        s.name(), s.amount(25, 900), s.pick(GOALS)), "agent"


def tax(s):
    return "finance", "%s %s is due %s; %s %s prepares it." % (
        poss(s.name()), s.pick(TAX_ITEMS), s.date(), s.name(), s.surname()), "tool"


def flight(s):
    return "travel", "%s flight %s%d from %s to %s leaves %s at %s, seat %d%s." % (
        poss(s.name()), s.pick(AIRLINES), s.rng.between(100, 2999), s.pick(TOWNS),
        s.pick(s.lex["capital"] + TOWNS), s.date(), s.time(6, 22), s.rng.between(3, 38),
        s.pick("ABCDEF")), "tool"


def hotel(s):
    month = s.pick(MONTHS)
    day = s.rng.between(1, 20)
    return "travel", "%s is booked at %s in %s, %s %d-%d, confirmation %s." % (
        s.name(), s.pick(HOTELS), s.pick(s.lex["capital"] + TOWNS), month, day,
        day + s.rng.between(1, 7), s.code()), "tool"


def trip_wish(s):
    return "travel", "%s wants to see %s in %s, mostly for the %s." % (
        s.name(), s.wn("capital"), s.pick(SEASONS), s.pick([
            "food", "museums", "hiking", "music", "architecture", "markets", "trains"])), "agent"


def past_trip(s):
    return "travel", "In %d %s went to %s and still talks about the %s there." % (
        s.rng.between(2009, 2023), s.name(), s.wn("capital"), s.wn("dish")), "agent"


def garden(s):
    return "garden", "%s grows %s and %s in %s, and %s." % (
        s.name(), s.wn("flower"), s.wn("vegetable"),
        s.pick(["raised beds", "pots on the balcony", "a community garden plot",
                "the side yard", "a greenhouse"]),
        s.pick(["waters them at dawn", "fights aphids every June", "saves seed every fall",
                "mulches with straw", "covers them on frosty nights"])), "agent"


def appliance_repair(s):
    return "home", "%s %s repair is scheduled for %s between %s and %s." % (
        poss(s.name()), s.wn("appliance"), s.date(), s.time(8, 11), s.time(12, 17)), "tool"


def car(s):
    return "home", "%s drives a %d %s; the next oil change is due at %s miles." % (
        s.name(), s.rng.between(2008, 2023), s.pick(CARS),
        "{:,}".format(s.rng.between(10, 190) * 1000)), "agent"


def game_night(s):
    return "hobby", "%s hosts %s night on the first %s of the month." % (
        s.name(), s.pick(s.lex["board_game"] + s.lex["card_game"]), s.pick(WEEKDAYS)), "agent"


def music(s):
    return "preference", "%s listens to %s while cooking and %s in the car." % (
        s.name(), s.wn("music_genre"), s.wn("music_genre")), "agent"


def book_club(s):
    return "social", "%s book club is reading %s this month; they meet at %s." % (
        poss(s.name()), s.pick(BOOKS), s.pick(["the library", "a wine bar", "someone's house",
                                              "the community hall"])), "agent"


def learned_term(s):
    term, _, definition = s.pick(s.lex.terms)
    return "conversation", "%s asked what %s is: %s." % (
        s.name(), article(term), definition), "agent"


def place_fact(s):
    name, _, definition = s.pick(s.lex.places)
    return "conversation", "While planning %s trip we looked up %s: %s." % (
        poss(s.name()), name, definition), "agent"


def word_example(s):
    word, pos, definition, example = s.pick(s.lex.vocab)
    return "conversation", "%s wanted an example of the %s '%s' (%s): \"%s.\"" % (
        s.name(), pos, word, definition, example.rstrip(".")), "agent"


def decision(s):
    a = s.name()
    return "conversation", ("On %s %s talked through the %s with %s and decided to %s. They "
                            "compared two options, asked %s %s for advice, and want a reminder "
                            "to check in again in %s.") % (
        s.date(), a, s.pick(["move", "budget", "car situation", "job offer", "renovation",
                             "school choice", "vacation plans"]),
        s.pick(AGENT_NAMES), s.pick(DECISIONS), s.name(), s.surname(), s.pick(MONTHS)), "agent"


def instruction(s):
    return "instruction", "Standing instruction from %s: %s." % (
        s.name(), s.pick(INSTRUCTIONS)), "user"


def device(s):
    return "home", "%s set up %s %s with %s." % (
        s.pick(AGENT_NAMES).capitalize(), poss(s.name()), s.pick(DEVICES),
        s.pick(SETTINGS)), "agent"


def short_fact(s):
    return "preference", s.pick([
        "%s prefers aisle seats." % s.name(),
        "%s has been vegetarian since %d." % (s.name(), s.rng.between(2001, 2023)),
        "%s gate code is %d." % (poss(s.name()), s.rng.between(1000, 9999)),
        "%s hates phone calls and prefers texts." % s.name(),
        "%s writes left-handed, so seat them on the end." % s.name(),
        "%s wears size %d shoes." % (s.name(), s.rng.between(5, 13)),
        "%s drinks %s, no sugar." % (s.name(), s.pick(s.lex["coffee"] + s.lex["tea"]))]), "agent"


def quiet_hours(s):
    return "instruction", "Don't message %s between %s and %s unless it's about %s." % (
        s.name(), s.time(20, 23), s.time(5, 9), s.pick(["the kids", "work", "a delivery",
                                                       "their mother", "the house alarm"])), "user"


def child_care(s):
    a, b = s.two_names()
    return "family", "%s %s %s (%d) goes to %s daycare; pickup by %s on %s." % (
        poss(a), s.pick(["youngest", "oldest", "kid", "middle child"]), b, s.rng.between(1, 5),
        s.pick(["Sunflower", "Little Otters", "Bright Start", "Maple Tree", "Tiny Steps"]),
        s.time(16, 18), s.pick(["weekdays", "Mondays and Wednesdays", "Tuesdays and Thursdays",
                                "Fridays"])), "agent"


def event_booking(s):
    return "events", "Private dinner for %s %s at %s, %s at %s, %d guests, %s deposit paid." % (
        poss(s.name()), s.pick(["40th birthday", "retirement", "engagement", "book launch",
                                "50th anniversary", "team farewell"]),
        s.pick(HOTELS), s.date(), s.time(17, 20), s.rng.between(8, 60),
        s.amount(100, 2000, 50)), "tool"


TEMPLATES = (appointment, appointment_clinic, medication, allergy, condition, pet_dog, pet_vet,
             birthday, relative, call_routine, visit, sport_days, running, instrument,
             morning_drink, favorite_dish, food_dislikes, recipe, shift, on_call, incident,
             meeting, deadline, certification, delivery, staff, bill, renewal, savings, tax,
             flight, hotel, trip_wish, past_trip, garden, appliance_repair, car, game_night,
             music, book_club, learned_term, place_fact, word_example, decision, instruction,
             device, short_fact, quiet_hours, child_care, event_booking)


# ----------------------------------------------------------------------------------------------
# Generation and checks.

def generate(count, seed, lex):
    """`count` distinct distractor records. Line i depends only on lines before it, so a shorter
    run is a prefix of a longer one. Exits if the templates cannot fill `count` distinct texts
    within a bounded number of draws."""
    rng = gen_corpora.Rng(seed, STREAM)
    slots = Slots(rng, lex)
    records, seen = [], set()
    draws, max_draws = 0, 20 * count + 1000
    while len(records) < count:
        draws += 1
        if draws > max_draws:
            sys.exit("only %d distinct distractors after %d draws" % (len(records), max_draws))
        template = rng.pick(TEMPLATES)
        topic, text, source = template(slots)
        text = text[0].upper() + text[1:]
        key = " ".join(text.casefold().split())
        if key in seen:
            continue
        seen.add(key)
        records.append({"text": text,
                        "metadata": {"persona": "distractor", "topic": topic,
                                     "shape": template.__name__},
                        "source": source})
    return records


def dump(records):
    return "".join(json.dumps(r, ensure_ascii=True, separators=(", ", ": ")) + "\n"
                   for r in records).encode("ascii")


def persona_memories(personas_dir):
    """({folded text: file name} of every persona memory, the capitalized words in them)."""
    texts, words = {}, set()
    for name in sorted(os.listdir(personas_dir)):
        if not name.endswith("_memories.jsonl"):
            continue
        with open(os.path.join(personas_dir, name), encoding="utf-8") as f:
            for line in f:
                text = json.loads(line)["text"]
                texts[" ".join(text.casefold().split())] = name
                words.update(re.findall(r"\b[A-Z][a-z]+\b", text))
    if not texts:
        sys.exit("no *_memories.jsonl under " + personas_dir)
    return texts, words


def validate(data, persona_texts, persona_words):
    """Errors: a name list shares a word with the personas, a line breaks the importer's rules,
    is a duplicate, names no owner from FIRST_NAMES, or equals a persona memory."""
    errors = []
    clash = sorted(persona_words & set(FIRST_NAMES + SURNAMES + PET_NAMES))
    if clash:
        errors.append("name lists share words with persona memories: %s" % ", ".join(clash))
    seen = set()
    owners = set(FIRST_NAMES)
    for i, line in enumerate(data.decode("ascii").split("\n")[:-1], 1):
        where = "line %d" % i
        obj = json.loads(line)
        meta = obj.get("metadata")
        if not isinstance(meta, dict) or set(obj) != gen_corpora.IMPORT_FIELDS:
            errors.append("%s: fields or metadata malformed" % where)
            continue
        text = obj["text"]
        if (not isinstance(text, str) or not text.strip() or "\0" in text
                or len(text.encode("utf-8")) > gen_corpora.MAX_TEXT_BYTES
                or obj["source"] not in gen_corpora.SOURCES):
            errors.append("%s: breaks the importer's rules" % where)
            continue
        key = " ".join(text.casefold().split())
        if key in seen:
            errors.append("%s: duplicate text %r" % (where, text))
        seen.add(key)
        if key in persona_texts:
            errors.append("%s: equals a memory in %s: %r" % (where, persona_texts[key], text))
        if not owners & set(re.findall(r"[A-Z][a-z]+", text)):
            errors.append("%s: names no owner: %r" % (where, text))
        if re.search(r"\b(I|my|me|I'm|I've)\b", text.split(": \"")[0]):
            errors.append("%s: first person outside a quotation: %r" % (where, text))
    return errors


def default_out(repo, count):
    if count % 1000 == 0:
        return os.path.join(repo, "data", "retrieval", "distractors_%dk.jsonl" % (count // 1000))
    return os.path.join(repo, "data", "retrieval", "distractors_%d.jsonl" % count)


def main():
    repo = os.path.normpath(os.path.join(SCRIPTS_DIR, ".."))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--wordnet-dir", default="/usr/share/wordnet")
    parser.add_argument("--personas-dir", default=os.path.join(repo, "data", "retrieval"))
    parser.add_argument("--out", help="default data/retrieval/distractors_<count/1000>k.jsonl")
    parser.add_argument("--check", action="store_true",
                        help="compare with --out instead of writing it")
    parser.add_argument("--stats", action="store_true", help="print counts per topic and shape")
    args = parser.parse_args()
    if not 1 <= args.count <= MAX_COUNT:
        sys.exit("--count must be in [1, %d]" % MAX_COUNT)
    out = args.out or default_out(repo, args.count)

    lex = gen_corpora.Lexicon(gen_corpora.WordNet(args.wordnet_dir))
    records = generate(args.count, args.seed, lex)
    data = dump(records)
    persona_texts, persona_words = persona_memories(args.personas_dir)
    errors = validate(data, persona_texts, persona_words)
    if args.count > PREFIX_CHECK:
        if not data.startswith(dump(generate(PREFIX_CHECK, args.seed, lex))):
            errors.append("a %d-line run is not a prefix of the %d-line run" % (
                PREFIX_CHECK, args.count))
    if errors:
        for e in errors[:50]:
            print("error: " + e, file=sys.stderr)
        sys.exit(1)
    if args.stats:
        for field in ("topic", "shape"):
            counts = {}
            for r in records:
                counts[r["metadata"][field]] = counts.get(r["metadata"][field], 0) + 1
            print("%s: %s" % (field, ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
        words = [len(r["text"].split()) for r in records]
        print("words: min %d, mean %.1f, max %d; %d bytes" % (
            min(words), sum(words) / len(words), max(words), len(data)))
    if args.check:
        try:
            with open(out, "rb") as f:
                same = f.read() == data
        except FileNotFoundError:
            same = False
        if not same:
            sys.exit("%s differs from a fresh run (rerun scripts/gen_retrieval_distractors.py "
                     "--count %d --seed %d)" % (out, args.count, args.seed))
        print("distractors up to date and valid: %s (%d lines, seed %d), none equal to any of "
              "%d persona memories" % (os.path.relpath(out, repo), args.count, args.seed,
                                       len(persona_texts)))
        return
    with open(out, "wb") as f:
        f.write(data)
    print("wrote %d lines (%d bytes) to %s" % (args.count, len(data), out))


if __name__ == "__main__":
    main()
