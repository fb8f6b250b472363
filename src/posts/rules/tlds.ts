/**
 * Top-level domains a bare domain (no `http://`) must end in for X to auto-link it, after twitter-text's
 * `validGTLD` / `validCCTLD` lists. The generic list holds the common ones, not all ~1,500 delegated names:
 * a bare domain on a rare gTLD is not treated as a link (with `http(s)://` any domain is).
 */
export const genericTlds: ReadonlySet<string> = new Set(
  `com net org edu gov mil int info biz name pro mobi aero asia cat coop jobs museum tel travel xxx post
  app dev page blog shop store online site website tech xyz club design space live news art cloud link top icu vip
  today world life email agency digital media network studio solutions services company academy center systems
  social group team tools software games fun love photo photography gallery music video wiki ltd inc llc global
  guru ninja rocks zone works watch run plus one work business marketing consulting finance money capital fund
  bank careers education school university health care clinic city land house place events press reviews community
  chat codes directory expert exchange express farm fit fitness food foundation how ink institute law legal lol
  market mba partners party pics pizza productions properties pub rest restaurant sale science shopping show ski
  soccer style support tax taxi technology tips tour town toys trade training tube vegas ventures vision win wine
  wtf yoga google youtube gay lgbt eco green energy solar africa berlin london nyc paris tokyo amsterdam moscow
  quebec scot wales bio audio radio film movie game gold golf host hosting jetzt kim ooo red blue pink black
  download click help host forum review report rip land`.split(/\s+/),
);

/** Two-letter country-code TLDs (ISO 3166 codes with a delegated domain, plus `ac`, `eu`, `su`, `uk`). */
export const countryTlds: ReadonlySet<string> = new Set(
  `ac ad ae af ag ai al am ao aq ar as at au aw ax az ba bb bd be bf bg bh bi bj bm bn bo br bs bt bw by bz
  ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz de dj dk dm do dz ec ee eg er es et eu fi fj fk fm fo fr
  ga gb gd ge gf gg gh gi gl gm gn gp gq gr gs gt gu gw gy hk hm hn hr ht hu id ie il im in io iq ir is it je jm jo
  jp ke kg kh ki km kn kp kr kw ky kz la lb lc li lk lr ls lt lu lv ly ma mc md me mg mh mk ml mm mn mo mp mq mr ms
  mt mu mv mw mx my mz na nc ne nf ng ni nl no np nr nu nz om pa pe pf pg ph pk pl pm pn pr ps pt pw py qa re ro rs
  ru rw sa sb sc sd se sg sh si sk sl sm sn so sr ss st su sv sx sy sz tc td tf tg th tj tk tl tm tn to tr tt tv tw
  tz ua ug uk us uy uz va vc ve vg vi vn vu wf ws ye yt za zm zw`.split(/\s+/),
);

/** Country codes X links even as `name.cc` with no path (twitter-text `validSpecialCCTLD`). */
export const specialShortCountryTlds: ReadonlySet<string> = new Set(['co', 'tv']);
