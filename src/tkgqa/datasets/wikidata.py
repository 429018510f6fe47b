"""Wikidata property labels needed to split TimeR4's verbalised TimeQuestions facts that the CronQuestions
relation list (``wd_id2relation_text.txt``, 203 properties) lacks.

Inferred by reading the retrieved facts (every entry occurs in them as the relation of some fact): these are
Wikidata property and qualifier labels as TimeR4's KG verbalises them — vocabulary, not answers.
``WEAK_RELATION_LABELS`` (function-word labels such as Wikidata's ``of`` qualifier, which also occurs inside
many names) are used only when no other label occurs in a fact.
"""

from __future__ import annotations

_EXTRA = """
academic thesis
acquisition transaction
adapted by
afflicts
after a work by
age of candidacy
Alexa rank
animator
anthem
applies to part
approved by
area
armament
attested in
author
authority
ballots cast
based on
birth name
brand
cast member
category combines topics
category contains
category's main topic
character role
characters
chemical formula
coach of sports team
coat of arms
color
coming into force
commemorates
competition class
conjugate acid
contains the administrative territorial entity
continent
conversion to SI unit
conversion to standard unit
copyright holder
copyright representative
copyright status
crew member(s)
criterion used
dedicated to
density
departure transaction
depends on software
derivative work
designated as terrorist by
designed by
determination method
different from
discography
distributed by
distribution format
draft pick number
drug or therapy used for treatment
duration
edition number
edition or translation of
elected in
elector
electoral district
electorate
employees
end cause
end period
event
executive body
facet of
family
father
feast day
female population
first aid measures
for work
game mode
GDP (PPP)
general secretary
had as last meal
has cause
has characteristic
has edition or translation
has immediate cause
has part(s)
has seal, badge, or sigil
height
highest point
historic county
history of topic
house number
Human Development Index
identity of object in context
identity of subject in context
immediate cause of
including
industry
inflation rate
inspired by
instrumentation
interaction
IPA transcription
is a list of
ISIN
issue
IUCN conservation status
IUCN taxon ID
killed by
kinship to subject
language of work or name
languages spoken, written or signed
last words
laws applied
legislated by
legislative body
located in or next to body of water
located in/on physical feature
located on astronomical body
located on street
lyrics by
made from material
main subject
male population
manifestation of
market capitalization
married name
mascot
mass
match time of event
mean age
measured physical quantity
measurement scale
member count
minimum temperature record
model item
month of the year
mother
motto
mountain range
name
name in native language
named by
national team appearances
native language
nature of statement
net profit
net worth
newspaper format
Nickel-Strunz '10th ed', review of (9th ed/ 2009 update)
Nickel-Strunz 9th edition (updated 2009)
nickname
nominal GDP
nominal GDP per capita
nominee
notation
number confirmed
number of children
number of deaths
number of decimal digits
number of households
number of matches played/races/starts
number of out-of-school children
number of participants
number of points/goals/set scored
number of reviews/ratings
number of speakers, writers, or signers
number of spoilt votes
number of wins
numeric value
object has role
object named as
office held by head of the organization
official name
officially opened by
operating income
orbits completed
order of battle
organization directed by the office or position
original broadcaster
original language of film or TV show
parent astronomical body
parent club
parliamentary group
parliamentary term
partially coincident with
patron saint
periapsis
phase of matter
phase point
place of marriage
points/goal scored by
pole position
political ideology
population
postal code
powered by
PPP GDP per capita
price
prisoner count
prize money
product or material produced or service provided
programmed in
proportion
pseudonym
published in
quantity
race time
radix
ranking
real GDP growth rate
record held
record or record progression
refine date
represents
research intervention
review score
route of administration
running mate
said to be the same as
screenwriter
season of club or team
season starts
section, verse, paragraph, or clause
series ordinal
short name
sibling
software engine
software version identifier
sourcing circumstances
space launch vehicle
speaker
start period
stated in
statement disputed by
statement is subject of
statement supported by
statistical leader
students count
studied in
subject named as
symbolizes
target
taxon name
taxon rank
ticker symbol
time in space
title
together with
tonality
top-level Internet domain
topic's main category
total assets
total equity
total fertility rate
total produced
total reserves
total revenue
total valid votes
tracklist
type of passengers/cargo
Unicode character
unit symbol
used by
uses
vaccine for
valid in period
valid in place
version type
visitors per year
volcano observatory
volume
votes received
World Heritage criteria
writing language
writing system
"""

EXTRA_RELATION_LABELS: frozenset[str] = frozenset(
    line.strip() for line in _EXTRA.splitlines() if line.strip()
)
WEAK_RELATION_LABELS: frozenset[str] = frozenset({"of"})
