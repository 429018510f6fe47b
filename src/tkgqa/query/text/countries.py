"""Countries and territories: names, common alternative names and demonyms (general knowledge).

One line per country: ``name|alternative name|… : demonym|demonym…``. The mention detector matches any
of the names against a KG's entity labels (and against the qualifier of ``Role_(Country)`` entities), and
uses the demonyms for adjectival mentions ("the Danish ministry" → ``…_(Denmark)``).
"""

from __future__ import annotations

_TABLE = """
Afghanistan|Islamic Republic of Afghanistan: Afghan|Afghani|Afghans
Albania: Albanian|Albanians
Algeria: Algerian|Algerians
Andorra: Andorran
Angola: Angolan|Angolans
Antigua and Barbuda|Antigua: Antiguan|Barbudan
Argentina: Argentine|Argentinian|Argentinean|Argentines
Armenia: Armenian|Armenians
Australia: Australian|Australians|Aussie
Austria: Austrian|Austrians
Azerbaijan: Azerbaijani|Azeri|Azerbaijanis
Bahamas|The Bahamas: Bahamian|Bahamians
Bahrain: Bahraini|Bahrainis
Bangladesh: Bangladeshi|Bangladeshis
Barbados: Barbadian|Bajan
Belarus|Byelorussia: Belarusian|Belarussian|Byelorussian|Belarusians
Belgium: Belgian|Belgians
Belize: Belizean
Benin: Beninese|Beninois
Bhutan: Bhutanese
Bolivia: Bolivian|Bolivians
Bosnia and Herzegovina|Bosnia-Herzegovina|Bosnia: Bosnian|Herzegovinian|Bosnians
Botswana: Motswana|Batswana|Botswanan
Brazil: Brazilian|Brazilians
Brunei|Brunei Darussalam: Bruneian
Bulgaria: Bulgarian|Bulgarians
Burkina Faso: Burkinabe|Burkinabé
Burundi: Burundian|Burundians
Cambodia|Kampuchea: Cambodian|Khmer|Cambodians
Cameroon: Cameroonian|Cameroonians
Canada: Canadian|Canadians
Cape Verde|Cabo Verde: Cape Verdean
Central African Republic|CAR: Central African
Chad: Chadian|Chadians
Chile: Chilean|Chileans
China|People's Republic of China|PRC|Mainland China: Chinese
Colombia: Colombian|Colombians
Comoros: Comoran|Comorian
Congo|Republic of the Congo|Congo-Brazzaville: Congolese
Democratic Republic of Congo|Democratic Republic of the Congo|DR Congo|DRC|Congo-Kinshasa|Zaire: Congolese
Costa Rica: Costa Rican|Costa Ricans
Cote d'Ivoire|Ivory Coast|Côte d'Ivoire: Ivorian|Ivorians
Croatia: Croatian|Croat|Croats|Croatians
Cuba: Cuban|Cubans
Cyprus: Cypriot|Cypriots
Czech Republic|Czechia: Czech|Czechs
Denmark: Danish|Dane|Danes
Djibouti: Djiboutian|Djiboutians
Dominica: Dominican
Dominican Republic: Dominican|Dominicans
Ecuador: Ecuadorian|Ecuadorean|Ecuadorians
Egypt: Egyptian|Egyptians
El Salvador|Salvador: Salvadoran|Salvadorian|Salvadorans
Equatorial Guinea: Equatorial Guinean|Equatoguinean
Eritrea: Eritrean|Eritreans
Estonia: Estonian|Estonians
Eswatini|Swaziland: Swazi|Swazis
Ethiopia: Ethiopian|Ethiopians
Fiji: Fijian|Fijians
Finland: Finnish|Finn|Finns
France: French|Frenchman|Frenchmen
Gabon: Gabonese
Gambia|The Gambia: Gambian|Gambians
Georgia: Georgian|Georgians
Germany|Federal Republic of Germany: German|Germans
Ghana: Ghanaian|Ghanian|Ghanaians
Greece|Hellenic Republic: Greek|Hellenic|Greeks
Grenada: Grenadian|Grenadians
Guatemala: Guatemalan|Guatemalans
Guinea: Guinean|Guineans
Guinea-Bissau|Guinea Bissau: Bissau-Guinean
Guyana: Guyanese
Haiti: Haitian|Haitians
Holy See|Vatican|Vatican City: Vatican
Honduras: Honduran|Hondurans
Hong Kong: Hong Konger|Hongkonger
Hungary: Hungarian|Hungarians|Magyar
Iceland: Icelandic|Icelander|Icelanders
India: Indian|Indians
Indonesia: Indonesian|Indonesians
Iran|Islamic Republic of Iran|Persia: Iranian|Persian|Iranians
Iraq: Iraqi|Iraqis
Ireland|Republic of Ireland|Eire: Irish
Israel: Israeli|Israelis
Italy: Italian|Italians
Jamaica: Jamaican|Jamaicans
Japan: Japanese
Jordan: Jordanian|Jordanians
Kazakhstan: Kazakh|Kazakhstani|Kazakhs
Kenya: Kenyan|Kenyans
Kiribati: I-Kiribati|Kiribatian
Kosovo: Kosovar|Kosovan|Kosovars
Kuwait: Kuwaiti|Kuwaitis
Kyrgyzstan|Kyrgyz Republic|Kirghizia: Kyrgyz|Kyrgyzstani|Kirghiz
Laos|Lao PDR|Lao People's Democratic Republic: Lao|Laotian|Laotians
Latvia: Latvian|Latvians|Lett
Lebanon: Lebanese
Lesotho: Basotho|Mosotho
Liberia: Liberian|Liberians
Libya: Libyan|Libyans
Liechtenstein: Liechtensteiner
Lithuania: Lithuanian|Lithuanians
Luxembourg: Luxembourgish|Luxembourger|Luxembourgers
Macao|Macau: Macanese
Macedonia|North Macedonia|Former Yugoslav Republic of Macedonia|FYROM: Macedonian|Macedonians
Madagascar: Malagasy|Madagascan
Malawi: Malawian|Malawians
Malaysia: Malaysian|Malaysians
Maldives|The Maldives: Maldivian|Maldivians
Mali: Malian|Malians
Malta: Maltese
Marshall Islands: Marshallese
Mauritania: Mauritanian|Mauritanians
Mauritius: Mauritian|Mauritians
Mexico: Mexican|Mexicans
Micronesia|Federated States of Micronesia: Micronesian
Moldova: Moldovan|Moldovans
Monaco: Monegasque|Monacan
Mongolia: Mongolian|Mongol|Mongolians
Montenegro: Montenegrin|Montenegrins
Morocco: Moroccan|Moroccans
Mozambique: Mozambican|Mozambicans
Myanmar|Burma: Myanmar|Burmese|Myanmarese
Namibia: Namibian|Namibians
Nauru: Nauruan
Nepal: Nepalese|Nepali|Nepalis
Netherlands|The Netherlands|Holland: Dutch|Netherlander|Netherlands
New Zealand: New Zealander|Kiwi|New Zealanders
Nicaragua: Nicaraguan|Nicaraguans
Niger: Nigerien|Nigeriens
Nigeria: Nigerian|Nigerians
North Korea|Democratic People's Republic of Korea|DPRK: North Korean|North Koreans
Norway: Norwegian|Norwegians
Oman: Omani|Omanis
Pakistan: Pakistani|Pakistanis
Palau: Palauan
Palestinian Territory, Occupied|Palestinian Territories|Palestine|Occupied Palestinian Territory: Palestinian
Panama: Panamanian|Panamanians
Papua New Guinea|PNG: Papua New Guinean|Papuan
Paraguay: Paraguayan|Paraguayans
Peru: Peruvian|Peruvians
Philippines|The Philippines: Philippine|Filipino|Filipina|Filipinos
Poland: Polish|Pole|Poles
Portugal: Portuguese
Puerto Rico: Puerto Rican|Puerto Ricans
Qatar: Qatari|Qataris
Romania|Rumania: Romanian|Romanians
Russia|Russian Federation: Russian|Russians
Rwanda: Rwandan|Rwandese|Rwandans
Saint Kitts and Nevis|St Kitts and Nevis: Kittitian|Nevisian
Saint Lucia|St Lucia: Saint Lucian
Saint Vincent and the Grenadines|St Vincent: Vincentian
Samoa: Samoan|Samoans
San Marino: Sammarinese
Sao Tome and Principe|São Tomé and Príncipe: Sao Tomean
Saudi Arabia|Kingdom of Saudi Arabia|KSA: Saudi|Saudi Arabian|Saudis
Senegal: Senegalese
Serbia: Serbian|Serb|Serbs
Seychelles: Seychellois
Sierra Leone: Sierra Leonean|Sierra Leoneans
Singapore: Singaporean|Singaporeans
Slovakia|Slovak Republic: Slovak|Slovakian|Slovaks
Slovenia: Slovenian|Slovene|Slovenes
Solomon Islands: Solomon Islander
Somalia: Somali|Somalian|Somalis
South Africa: South African|South Africans
South Korea|Republic of Korea|ROK|Korea: South Korean|Korean|South Koreans|Koreans
South Sudan: South Sudanese
Spain: Spanish|Spaniard|Spaniards
Sri Lanka|Ceylon: Sri Lankan|Sri Lankans
Sudan: Sudanese
Suriname|Surinam: Surinamese
Sweden: Swedish|Swede|Swedes
Switzerland: Swiss
Syria|Syrian Arab Republic: Syrian|Syrians
Taiwan|Republic of China|Chinese Taipei: Taiwanese
Tajikistan: Tajik|Tajikistani|Tajiks
Tanzania|United Republic of Tanzania: Tanzanian|Tanzanians
Thailand|Siam: Thai|Thais|Siamese
Timor-Leste|East Timor|Timor Leste: Timorese|East Timorese
Togo: Togolese
Tonga: Tongan|Tongans
Trinidad and Tobago|Trinidad: Trinidadian|Tobagonian|Trinidadians
Tunisia: Tunisian|Tunisians
Turkey|Turkiye|Türkiye: Turkish|Turk|Turks
Turkmenistan: Turkmen|Turkmens
Tuvalu: Tuvaluan
Uganda: Ugandan|Ugandans
Ukraine: Ukrainian|Ukrainians
United Arab Emirates|UAE|Emirates: Emirati|Emiratis
United Kingdom|UK|U.K.|Britain|Great Britain: British|Briton|Britons
United States|United States of America|USA|US|U.S.|U.S.A.|America: American|Americans|US|U.S.
Uruguay: Uruguayan|Uruguayans
Uzbekistan: Uzbek|Uzbekistani|Uzbeks
Vanuatu: Ni-Vanuatu|Vanuatuan
Venezuela: Venezuelan|Venezuelans
Vietnam|Viet Nam: Vietnamese
Western Sahara|Sahrawi Republic: Sahrawi|Sahrawis
Yemen: Yemeni|Yemenite|Yemenis
Zambia: Zambian|Zambians
Zimbabwe: Zimbabwean|Zimbabweans
England: English|Englishman
Scotland: Scottish|Scot|Scots
Wales: Welsh
Northern Ireland: Northern Irish
Greenland: Greenlandic|Greenlander
Bermuda: Bermudian
Cook Islands: Cook Islander
Niue: Niuean
Tibet|Tibet Autonomous Region: Tibetan|Tibetans
Chechnya|Chechen Republic: Chechen|Chechens
Abkhazia: Abkhaz|Abkhazian
Crimea: Crimean
Kashmir: Kashmiri|Kashmiris
Africa: African|Africans
Europe: European|Europeans
Asia: Asian|Asians
Latin America: Latin American|Latin Americans
Middle East: Middle Eastern
Caribbean: Caribbean
"""


def _parse() -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    rows = []
    for line in _TABLE.strip().splitlines():
        names_part, _, dem_part = line.partition(": ")
        names = tuple(n.strip() for n in names_part.split("|") if n.strip())
        demonyms = tuple(d.strip() for d in dem_part.split("|") if d.strip())
        rows.append((names, demonyms))
    return rows


COUNTRIES: list[tuple[tuple[str, ...], tuple[str, ...]]] = _parse()
"""``[(names, demonyms)]``: the first name is the common English name."""
