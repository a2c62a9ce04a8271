/**
 * A generated personal memory for the retrieval benchmark: ≈ 880 daily notes
 * (memory/YYYY-MM-DD.md, about a third written in Chinese) and MEMORY.md, with questions
 * whose answer is known (the one file that holds the fact).
 *
 * Deterministic (seeded PRNG). Every day has a few everyday entries drawn from pools shared by
 * all days (standups, groceries, runs, calls with the same colleagues, trips to the same
 * cities), so the people, places and topic words of a question also occur in many notes that
 * do not answer it. Facts are planted from templates with random fillers; each fact's names
 * also appear in unrelated entries elsewhere. Questions are written the way a user asks them,
 * from their own templates: they name what the user would remember (a person, a city, an
 * object, the kind of thing) and ask in other words than the note uses, never quoting it.
 *
 * Categories:
 *   keyword       the question uses a distinctive name or identifier the note contains
 *   paraphrase    natural question; shares at most a name or a topic word with the note
 *   chinese       Chinese question, Chinese note
 *   cross         English question → Chinese note or Chinese question → English note; the
 *                 note mixes in the name as bilingual notes do (a Latin name in Chinese text)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rng } from './rng.js';

export type QueryCategory = 'keyword' | 'paraphrase' | 'chinese' | 'cross';

export interface BenchQuery {
  query: string;
  /** The workspace-relative file that answers it. */
  answer: string;
  category: QueryCategory;
}

const PEOPLE = [
  'Alice',
  'Bram',
  'Dana',
  'Elif',
  'Farid',
  'Greta',
  'Hiro',
  'Ines',
  'Jonas',
  'Kofi',
  'Lena',
  'Marco',
  'Nadia',
  'Omar',
  'Priya',
  'Tomas',
];
const PEOPLE_ZH = ['王磊', '李娜', '张伟', '刘洋', '陈静', '杨帆', '赵敏', '周婷', '吴昊', '孙悦'];
const CITIES: Array<[string, string]> = [
  ['Lisbon', '里斯本'],
  ['Kyoto', '京都'],
  ['Oslo', '奥斯陆'],
  ['Porto', '波尔图'],
  ['Valencia', '瓦伦西亚'],
  ['Tallinn', '塔林'],
  ['Hanoi', '河内'],
  ['Seville', '塞维利亚'],
  ['Krakow', '克拉科夫'],
  ['Montreal', '蒙特利尔'],
  ['Hangzhou', '杭州'],
  ['Chengdu', '成都'],
  ['Xiamen', '厦门'],
  ['Suzhou', '苏州'],
  ['Kunming', '昆明'],
  ['Qingdao', '青岛'],
];
const HOTELS = [
  'Hotel Miramar',
  'Hotel Estrela',
  'Hotel Lumen',
  'Hotel Corvo',
  'Hotel Aurora',
  'Hotel Solace',
  'Hotel Meridia',
  'Hotel Tilia',
];
const ITEMS: Array<[string, string]> = [
  ['dishwasher', '洗碗机'],
  ['e-bike', '电动自行车'],
  ['standing desk', '升降桌'],
  ['espresso grinder', '磨豆机'],
  ['air purifier', '空气净化器'],
  ['projector', '投影仪'],
  ['robot vacuum', '扫地机器人'],
  ['rowing machine', '划船机'],
  ['rice cooker', '电饭煲'],
  ['drone', '无人机'],
];
const BRANDS = ['Bosch', 'Dyson', 'Philips', 'Xiaomi', 'Miele', 'Breville', 'Sony', 'Garmin', 'Zojirushi', 'DJI'];
const SERVICES = [
  'billing service',
  'search indexer',
  'auth gateway',
  'mobile app',
  'payment webhook',
  'report exporter',
  'sync worker',
  'image resizer',
];
const EVENTS: Array<[string, string]> = [
  ['team offsite', '团队外出活动'],
  ['design workshop', '设计研讨会'],
  ['partner summit', '合作伙伴峰会'],
  ['product launch', '产品发布会'],
];
const DISHES = ['ramen', 'paella', 'dumplings', 'pho', 'tapas', 'hotpot', 'sushi', 'tagine'];
const DOCTORS = ['Dr. Varga', 'Dr. Osei', 'Dr. Lindgren', 'Dr. Moreau', 'Dr. Castillo'];
const BODY_PARTS: Array<[string, string]> = [
  ['knee', '膝盖'],
  ['shoulder', '肩膀'],
  ['lower back', '腰'],
  ['wrist', '手腕'],
  ['ankle', '脚踝'],
  ['neck', '脖子'],
  ['elbow', '手肘'],
  ['hip', '髋部'],
  ['heel', '脚后跟'],
];
const ACCOUNTS: Array<[string, string]> = [
  ['router admin', '路由器后台'],
  ['tax portal', '个税网站'],
  ['pension account', '社保账户'],
  ['car insurance', '车险'],
  ['school portal', '学校系统'],
  ['health insurance', '医保账户'],
  ['electricity account', '电力公司账户'],
  ['library card', '图书馆账号'],
  ['mortgage portal', '房贷账户'],
];
const BOOKS = [
  'The Overstory',
  'Piranesi',
  'Klara and the Sun',
  'The Three-Body Problem',
  'Educated',
  'Sapiens',
  'The Left Hand of Darkness',
  'Pachinko',
];

/** Everyday entries: the background every question has to be found in. */
const FILLER_EN: Array<(r: () => number) => string> = [
  (r) => `Standup with ${pick(r, PEOPLE)} and ${pick(r, PEOPLE)}; nothing blocked.`,
  (r) =>
    `Groceries: ${pick(r, ['eggs', 'oat milk', 'tomatoes', 'rice', 'bread', 'apples', 'coffee beans'])}, ${pick(r, ['spinach', 'yogurt', 'pasta', 'lemons', 'cheese'])}.`,
  (r) =>
    `Ran ${3 + Math.floor(r() * 10)} km along the river, ${pick(r, ['easy pace', 'felt heavy', 'new personal best', 'windy'])}.`,
  (r) => `Call with ${pick(r, PEOPLE)} about the ${pick(r, SERVICES)} roadmap.`,
  (r) => `Reviewed pull requests for the ${pick(r, SERVICES)}.`,
  (r) => `Read a few chapters of ${pick(r, BOOKS)} before bed.`,
  (r) => `Lunch with ${pick(r, PEOPLE)} — ${pick(r, DISHES)} near the office.`,
  (r) => `Planning notes for the trip to ${pick(r, CITIES)[0]} next month.`,
  (r) => `Paid the ${pick(r, ['electricity', 'internet', 'water', 'phone'])} bill.`,
  (r) => `Weekly sync with ${pick(r, PEOPLE)}: priorities unchanged.`,
  () => `Cleaned the flat and did laundry.`,
  (r) => `Team retro: ${pick(r, ['too many meetings', 'deploys were smooth', 'on-call was noisy', 'good sprint'])}.`,
  (r) => `Watched a documentary about ${pick(r, ['deep sea life', 'the Silk Road', 'volcanoes', 'jazz history'])}.`,
  (r) =>
    `Budget check: spending on ${pick(r, ['restaurants', 'transport', 'books', 'groceries'])} a bit high this month.`,
  (r) => `${pick(r, PEOPLE)} shared photos from ${pick(r, CITIES)[0]}.`,
  (r) => `Fixed a small bug in the ${pick(r, SERVICES)} tests.`,
  () => `Dentist reminder for next quarter.`,
  () => `Yoga class in the evening.`,
];
const FILLER_ZH: Array<(r: () => number) => string> = [
  (r) => `和${pick(r, PEOPLE_ZH)}开了站会，进展顺利。`,
  (r) =>
    `去超市买了${pick(r, ['鸡蛋', '牛奶', '西红柿', '大米', '面包', '苹果'])}和${pick(r, ['青菜', '酸奶', '面条', '柠檬'])}。`,
  (r) => `晚上跑步${3 + Math.floor(r() * 10)}公里，${pick(r, ['感觉不错', '有点累', '风很大'])}。`,
  (r) => `和${pick(r, PEOPLE_ZH)}通电话，聊了${pick(r, ['项目进度', '周末安排', '家里的事', '工作计划'])}。`,
  (r) => `读了几章《${pick(r, ['三体', '活着', '围城', '平凡的世界', '红楼梦'])}》。`,
  (r) => `中午和同事吃了${pick(r, ['火锅', '饺子', '拉面', '米线', '烤鸭'])}。`,
  (r) => `计划下个月去${pick(r, CITIES)[1]}玩。`,
  (r) => `交了${pick(r, ['电费', '网费', '水费', '话费'])}。`,
  () => `打扫房间，洗衣服。`,
  (r) => `周会：${pick(r, ['优先级没有变化', '讨论了招聘计划', '回顾了上个月的数据'])}。`,
  (r) => `看了一部关于${pick(r, ['海洋', '丝绸之路', '火山', '宇宙'])}的纪录片。`,
  (r) => `这个月在${pick(r, ['餐饮', '交通', '买书'])}上花得有点多。`,
  () => `晚上去上了瑜伽课。`,
  (r) => `修了${pick(r, SERVICES)}测试里的一个小问题。`,
];

function pick<T>(r: () => number, list: readonly T[]): T {
  return list[Math.floor(r() * list.length)]!;
}

interface Fact {
  /** The bullet written into the note. */
  text: string;
  language: 'en' | 'zh';
  query: string;
  category: QueryCategory;
  /** Unrelated entries that reuse the fact's names, written into other notes. */
  echoes: string[];
  /** What the question names (people, places, objects): no two facts of a topic share one, so every question has one answer. */
  keys: string[];
}

/** The fact templates: each returns a planted entry and a question about it, by category. */
const TOPICS: Array<(r: () => number, category: QueryCategory) => Fact> = [
  // Where am I staying?
  (r, category) => {
    const [city, cityZh] = pick(r, CITIES);
    const hotel = pick(r, HOTELS);
    const [event, eventZh] = pick(r, EVENTS);
    const nights = 2 + Math.floor(r() * 4);
    const echoes = [
      `Flights to ${city} for the ${event} are still not booked.`,
      `${city} ${event} agenda draft sent around.`,
    ];
    const keys = [city];
    if (category === 'chinese')
      return {
        language: 'zh',
        text: `订好了${cityZh}的酒店（${hotel}），${eventZh}期间住${nights}晚，含早餐。`,
        query: `我去${cityZh}住哪家酒店？`,
        category,
        echoes: [`${cityZh}的${eventZh}议程初稿发出去了。`],
        keys,
      };
    if (category === 'cross')
      return {
        language: 'zh',
        text: `订好了 ${city} 的 ${hotel}，${eventZh}期间住${nights}晚。`,
        query: `which hotel did I book in ${city}?`,
        category,
        echoes,
        keys,
      };
    if (category === 'keyword')
      return {
        language: 'en',
        text: `Booked ${hotel} in ${city} for the ${event}: ${nights} nights, breakfast included.`,
        query: `${hotel} ${city} booking`,
        category,
        echoes,
        keys,
      };
    return {
      language: 'en',
      text: `Booked ${hotel} in ${city} for the ${event}: ${nights} nights, breakfast included.`,
      query: `where am I staying in ${city} for the ${event}?`,
      category,
      echoes,
      keys,
    };
  },
  // A purchase and its price.
  (r, category) => {
    const index = Math.floor(r() * ITEMS.length);
    const [item, itemZh] = ITEMS[index]!;
    const brand = BRANDS[index]!;
    const price = 80 + Math.floor(r() * 900);
    const echoes = [`Looked at ${item} reviews again, undecided.`, `${pick(r, PEOPLE)} recommended a ${item}.`];
    const keys = [item];
    if (category === 'chinese')
      return {
        language: 'zh',
        text: `终于买了${itemZh}（${brand}），花了${price}元，周五送到。`,
        query: `我买的${itemZh}多少钱？`,
        category,
        echoes: [`又看了看${itemZh}的评测，还没决定。`],
        keys,
      };
    if (category === 'cross')
      return {
        language: 'zh',
        text: `终于下单了 ${brand} 的${itemZh}，${price}元。`,
        query: `how much did the ${brand} thing I ordered cost?`,
        category,
        echoes,
        keys,
      };
    if (category === 'keyword')
      return {
        language: 'en',
        text: `Ordered the ${brand} ${item} for ${price} euros; delivery on Friday.`,
        query: `${brand} ${item} price`,
        category,
        echoes,
        keys,
      };
    return {
      language: 'en',
      text: `Ordered the ${brand} ${item} for ${price} euros; delivery on Friday.`,
      query: `how much did I pay for the ${item}?`,
      category,
      echoes,
      keys,
    };
  },
  // An incident ticket.
  (r, category) => {
    const service = pick(r, SERVICES);
    const ticket = `${pick(r, ['OPS', 'INC', 'BUG', 'SEC'])}-${1000 + Math.floor(r() * 9000)}`;
    const cause = pick(r, [
      'an expired TLS certificate',
      'a connection pool leak',
      'a missing database index',
      'a race in the retry loop',
      'a full disk on the build host',
    ]);
    const causeZh = pick(r, ['证书过期', '连接池泄漏', '缺少数据库索引', '重试逻辑的竞态条件', '磁盘满了']);
    const echoes = [
      `The ${service} dashboards look normal today.`,
      `Ticket ${ticket.split('-')[0]}-${1000 + Math.floor(r() * 9000)} closed without changes.`,
    ];
    // The ID names the incident; without it, the service does.
    const keys = category === 'cross' || category === 'keyword' ? [ticket] : [service];
    if (category === 'chinese')
      return {
        language: 'zh',
        text: `${service}出故障了，原因是${causeZh}，工单 ${ticket}。`,
        query: `${service}那次故障是什么原因？`,
        category,
        echoes: [`${service}今天一切正常。`],
        keys,
      };
    if (category === 'cross')
      return {
        language: 'zh',
        text: `工单 ${ticket}：${service}宕机，原因是${causeZh}。`,
        query: `what caused ${ticket}?`,
        category,
        echoes,
        keys,
      };
    if (category === 'keyword')
      return {
        language: 'en',
        text: `${ticket}: the ${service} went down because of ${cause}; fixed and postmortem written.`,
        query: `${ticket} root cause`,
        category,
        echoes,
        keys,
      };
    return {
      language: 'en',
      text: `${ticket}: the ${service} went down because of ${cause}; fixed and postmortem written.`,
      query: `why did the ${service} break that time?`,
      category,
      echoes,
      keys,
    };
  },
  // A decision with a person.
  (r, category) => {
    const person = pick(r, PEOPLE);
    const personZh = pick(r, PEOPLE_ZH);
    const quarter = `Q${1 + Math.floor(r() * 4)}`;
    const percent = 5 + Math.floor(r() * 30);
    const area = pick(r, ['conference travel', 'contractor hours', 'cloud spend', 'hardware purchases']);
    const areaZh = pick(r, ['差旅', '外包工时', '云服务开支', '硬件采购']);
    const echoes = [`${person} out sick today.`, `Sent ${person} the ${quarter} numbers.`];
    if (category === 'chinese')
      return {
        language: 'zh',
        text: `和${personZh}定了${quarter}预算：${areaZh}削减${percent}%。`,
        query: `我跟${personZh}商量的预算决定是什么？`,
        category,
        echoes: [`${personZh}今天请假了。`],
        keys: [personZh],
      };
    if (category === 'cross')
      return {
        language: 'en',
        text: `Budget meeting with ${personZh}: cut ${area} by ${percent}% in ${quarter}.`,
        query: `${personZh}和我定的预算削减了多少？`,
        category,
        echoes: [`${personZh} joined the standup late.`],
        keys: [personZh],
      };
    if (category === 'keyword')
      return {
        language: 'en',
        text: `Budget review with ${person}: decided to cut ${area} by ${percent}% in ${quarter}.`,
        query: `${person} ${quarter} budget ${area}`,
        category,
        echoes,
        keys: [person],
      };
    return {
      language: 'en',
      text: `Budget review with ${person}: decided to cut ${area} by ${percent}% in ${quarter}.`,
      query: `what did ${person} and I decide about the budget?`,
      category,
      echoes,
      keys: [person],
    };
  },
  // A doctor's appointment.
  (r, category) => {
    const doctor = pick(r, DOCTORS);
    const [part, partZh] = pick(r, BODY_PARTS);
    const advice = pick(r, [
      'physiotherapy twice a week',
      'no running for a month',
      'an MRI in three weeks',
      'ice and rest',
    ]);
    const echoes = [`${doctor}'s office moved to the second floor.`, `My ${part} feels fine after the run.`];
    if (category === 'chinese')
      return {
        language: 'zh',
        text: `去医院看了${partZh}，医生建议${pick(r, ['每周做两次理疗', '一个月内不要跑步', '三周后做核磁共振'])}。`,
        query: `医生对我的${partZh}怎么说？`,
        category,
        echoes: [`${partZh}今天感觉还好。`],
        keys: [part],
      };
    if (category === 'cross')
      return {
        language: 'zh',
        text: `${doctor} 看了我的${partZh}，建议${pick(r, ['每周做两次理疗', '一个月内不要跑步'])}。`,
        query: `what did ${doctor} say?`,
        category,
        echoes,
        keys: [doctor],
      };
    if (category === 'keyword')
      return {
        language: 'en',
        text: `${doctor} examined my ${part}: ${advice}.`,
        query: `${doctor} ${part}`,
        category,
        echoes,
        keys: [doctor, part],
      };
    return {
      language: 'en',
      text: `${doctor} examined my ${part}: ${advice}.`,
      query: `what was the doctor's advice about my ${part}?`,
      category,
      echoes,
      keys: [part],
    };
  },
  // A gift idea / birthday.
  (r, category) => {
    const person = pick(r, PEOPLE);
    const personZh = pick(r, PEOPLE_ZH);
    const gift = pick(r, [
      'a fountain pen',
      'a pottery class voucher',
      'noise-cancelling headphones',
      'a rare tea set',
      'a climbing day pass',
    ]);
    const giftZh = pick(r, ['一支钢笔', '陶艺课体验券', '降噪耳机', '一套茶具', '攀岩体验卡']);
    const echoes = [`${person} is back from holiday.`, `Coffee with ${person}.`];
    if (category === 'chinese')
      return {
        language: 'zh',
        text: `${personZh}下个月生日，打算送${giftZh}。`,
        query: `${personZh}生日送什么好？`,
        category,
        echoes: [`${personZh}出差回来了。`],
        keys: [personZh],
      };
    if (category === 'cross')
      return {
        language: 'zh',
        text: `${person} 下个月生日，准备送${giftZh}。`,
        query: `what should I give ${person} for their birthday?`,
        category,
        echoes,
        keys: [person],
      };
    if (category === 'keyword')
      return {
        language: 'en',
        text: `${person}'s birthday is next month — idea: ${gift}.`,
        query: `${person} birthday gift`,
        category,
        echoes,
        keys: [person],
      };
    return {
      language: 'en',
      text: `${person}'s birthday is next month — idea: ${gift}.`,
      query: `any present ideas for ${person}?`,
      category,
      echoes,
      keys: [person],
    };
  },
  // A recommendation (restaurant).
  (r, category) => {
    const [city, cityZh] = pick(r, CITIES);
    const dish = pick(r, DISHES);
    const place = `${pick(r, ['Casa', 'Little', 'Old', 'Blue'])} ${pick(r, ['Lantern', 'Harbour', 'Fig', 'Willow', 'Anchor'])}`;
    const echoes = [`Weather in ${city} looks rainy next week.`, `Made ${dish} at home, too salty.`];
    const keys = [city];
    if (category === 'chinese')
      return {
        language: 'zh',
        text: `朋友推荐${cityZh}的一家小馆子「${place}」，招牌是${pick(r, ['火锅', '小笼包', '米线', '海鲜'])}。`,
        query: `${cityZh}有什么推荐的馆子？`,
        category,
        echoes: [`${cityZh}下周好像要下雨。`],
        keys,
      };
    // No word in common: only a model that translates can answer this one.
    if (category === 'cross')
      return {
        language: 'zh',
        text: `朋友推荐${cityZh}的「${place}」，一定要去吃。`,
        query: `restaurant tip for ${city}?`,
        category,
        echoes,
        keys,
      };
    if (category === 'keyword')
      return {
        language: 'en',
        text: `${pick(r, PEOPLE)} recommends ${place} in ${city} for ${dish}.`,
        query: `${place} ${city}`,
        category,
        echoes,
        keys,
      };
    return {
      language: 'en',
      text: `${pick(r, PEOPLE)} recommends ${place} in ${city} for ${dish}.`,
      query: `where should I eat ${dish} in ${city}?`,
      category,
      echoes,
      keys,
    };
  },
  // A password/account hint — no secret, just where it lives.
  (r, category) => {
    const [account, accountZh] = pick(r, ACCOUNTS);
    const where = pick(r, [
      'the blue notebook',
      'the family password manager vault',
      'the drawer under the printer',
      'the shared drive folder "admin"',
    ]);
    const echoes = [`Updated the ${account} contact email.`, `Renewed the ${account} login.`];
    const keys = [account];
    if (category === 'chinese')
      return {
        language: 'zh',
        text: `${accountZh}的登录信息记在${pick(r, ['蓝色笔记本', '家庭密码管理器', '打印机下面的抽屉'])}里。`,
        query: `${accountZh}的账号信息放在哪了？`,
        category,
        echoes: [`更新了${accountZh}的联系邮箱。`],
        keys,
      };
    if (category === 'cross')
      return {
        language: 'en',
        text: `${accountZh} (${account}) login details are in ${where}.`,
        query: `${accountZh}的登录信息在哪里？`,
        category,
        echoes,
        keys,
      };
    if (category === 'keyword')
      return {
        language: 'en',
        text: `The ${account} login details are kept in ${where}.`,
        query: `${account} login details`,
        category,
        echoes,
        keys,
      };
    return {
      language: 'en',
      text: `The ${account} login details are kept in ${where}.`,
      query: `where did I write down how to get into the ${account}?`,
      category,
      echoes,
      keys,
    };
  },
];

function day(index: number): string {
  return new Date(Date.UTC(2024, 0, 1) + index * 86_400_000).toISOString().slice(0, 10);
}

/** How many questions of each category (≈ 72 in all). */
const PLAN: Record<QueryCategory, number> = { keyword: 18, paraphrase: 20, chinese: 18, cross: 16 };

export interface PersonalCorpus {
  workspace: string;
  queries: BenchQuery[];
  files: number;
  /** Daily notes written in Chinese. */
  chineseNotes: number;
}

export function generatePersonalCorpus(root: string, options: { days?: number; seed?: number } = {}): PersonalCorpus {
  const days = options.days ?? 880;
  const r = rng(options.seed ?? 20261125);
  const workspace = join(root, 'workspace');
  mkdirSync(join(workspace, 'memory'), { recursive: true });
  const language: Array<'en' | 'zh'> = Array.from({ length: days }, () => (r() < 1 / 3 ? 'zh' : 'en'));
  const notes: string[][] = language.map((lang, index) => {
    const pool = lang === 'zh' ? FILLER_ZH : FILLER_EN;
    const count = 3 + Math.floor(r() * 4);
    return Array.from({ length: count }, () => pick(r, pool)(r)).concat(
      index % 7 === 0 ? [lang === 'zh' ? '本周回顾：一切按计划进行。' : 'Weekly review: on track.'] : [],
    );
  });
  const used = new Set<number>();
  const dayOf = (lang: 'en' | 'zh'): number => {
    for (;;) {
      const index = Math.floor(r() * days);
      if (language[index] === lang && !used.has(index)) {
        used.add(index);
        return index;
      }
    }
  };
  const queries: BenchQuery[] = [];
  let topic = 0;
  const usedKeys = TOPICS.map(() => new Set<string>());
  for (const category of Object.keys(PLAN) as QueryCategory[]) {
    for (let i = 0; i < PLAN[category]; i++) {
      const which = topic++ % TOPICS.length;
      let fact = TOPICS[which]!(r, category);
      for (let attempt = 0; fact.keys.some((key) => usedKeys[which]!.has(key)); attempt++) {
        if (attempt > 200) throw new Error(`personal corpus: topic ${which} ran out of distinct names`);
        fact = TOPICS[which]!(r, category);
      }
      for (const key of fact.keys) usedKeys[which]!.add(key);
      const target = dayOf(fact.language);
      const lines = notes[target]!;
      lines.splice(Math.floor(r() * (lines.length + 1)), 0, fact.text);
      for (const echo of fact.echoes) {
        const other = Math.floor(r() * days);
        if (other !== target) notes[other]!.push(echo);
      }
      queries.push({ query: fact.query, answer: `memory/${day(target)}.md`, category });
    }
  }
  notes.forEach((lines, index) => {
    writeFileSync(
      join(workspace, 'memory', `${day(index)}.md`),
      `# ${day(index)}\n\n${lines.map((line) => `- ${line}`).join('\n')}\n`,
    );
  });
  // Long-term memory: standing preferences and people, asked about like everything else.
  const memory = [
    '# Long-term memory',
    '',
    '## Preferences',
    '- Coffee: dark roast from Ethiopia, brewed in a French press; no sugar.',
    '- Never schedule meetings before 10:00.',
    '- Prefers window seats on flights and aisle seats on trains.',
    '- 不吃香菜，微辣可以。',
    '',
    '## People',
    `- ${PEOPLE[0]} is the finance lead and owns the quarterly budget.`,
    `- ${PEOPLE_ZH[0]}是大学同学，现在在${CITIES[11]![1]}工作。`,
    '',
  ].join('\n');
  writeFileSync(join(workspace, 'MEMORY.md'), memory);
  queries.push(
    { query: 'how do I take my coffee?', answer: 'MEMORY.md', category: 'paraphrase' },
    { query: 'seat preference when flying', answer: 'MEMORY.md', category: 'paraphrase' },
    { query: '我吃不吃香菜？', answer: 'MEMORY.md', category: 'chinese' },
    { query: `where does ${PEOPLE_ZH[0]} work now?`, answer: 'MEMORY.md', category: 'cross' },
  );
  return { workspace, queries, files: days + 1, chineseNotes: language.filter((lang) => lang === 'zh').length };
}
