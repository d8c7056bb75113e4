// The texts every tokenizer's reference ids are made for (make_tokenizer_references.mjs):
// prose, code, numbers, contractions in every case, whitespace runs, accents and combining
// marks, scripts other than Latin, emoji sequences, special-token text, very long words and
// the empty text. Deterministic: the same list every run.
const prose = [
  "The cat sat on the mat",
  "The animal didn't cross the street because it was too tired",
  "Once upon a time, there was a little girl named Red Riding Hood.",
  "Hello world",
  "Hello, world!",
  "hello world",
  "HELLO WORLD",
  "The quick brown fox jumps over the lazy dog.",
  "It was the best of times, it was the worst of times.",
  "To be, or not to be: that is the question.",
  "Attention is all you need.",
  "Transformers compute attention weights with a softmax over scaled dot products.",
  "She sells sea-shells by the sea-shore.",
  "Mr. Smith went to Washington D.C. on Jan. 5th.",
  "\"Quoted text\" and 'single quotes' and `backticks`.",
  "Wait... what?! Really?!?",
  "e-mail: someone@example.com, web: https://example.org/path?q=1&r=2#frag",
  "Semicolons; colons: dashes - en – em — ellipsis …",
  "A sentence with (parentheses) [brackets] {braces} <angles>.",
  "The year 1984 had 365 days; 2024 had 366.",
  "Café au lait, s'il vous plaît.",
  "Über die Brücke gehen wir morgen früh.",
  "¿Dónde está la biblioteca? ¡Aquí!",
  "Naïve coöperation in the façade of a rôle.",
  "Mañana será otro día.",
  "Ångström, Øresund, Æsir.",
  "İstanbul'da ılık bir gün.",
  "Zażółć gęślą jaźń.",
  "Příliš žluťoučký kůň úpěl ďábelské ódy.",
  "Ελληνικά: Γειά σου Κόσμε.",
  "Русский текст: Привет, мир!",
  "Українська мова: Їжак і ґанок.",
  "שלום עולם",
  "مرحبا بالعالم",
  "السَّلَامُ عَلَيْكُمْ",
  "नमस्ते दुनिया",
  "สวัสดีชาวโลก",
  "안녕하세요 세계",
  "こんにちは世界",
  "カタカナとひらがなと漢字",
  "你好，世界！",
  "我爱自然语言处理。",
  "中文English混合text测试123",
  "Tiếng Việt có dấu: Xin chào thế giới.",
  "ქართული ენა",
  "Հայերեն",
  "አማርኛ",
  "ᚠᛇᚻ᛫ᛒᛦᚦ",
  "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕞𝕒𝕥𝕙 𝒻𝓇𝒶𝓀𝓉𝓊𝓇",
  "ﬁ ﬂ ﬀ ligatures",
  "Full-width: ＡＢＣ１２３",
];
const code = [
  "def main():\n    print(\"hello\")\n",
  "int main(void) {\n\treturn 0;\n}\n",
  "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }",
  "if x == 1:\n    y = x ** 2\nelse:\n    y = -x\n",
  "const f = (a, b) => a + b; // arrow",
  "SELECT name, COUNT(*) FROM users WHERE age >= 18 GROUP BY name;",
  "<html><body><p class=\"x\">Hi</p></body></html>",
  "{\"key\": [1, 2, 3], \"nested\": {\"a\": null, \"b\": true}}",
  "#include <stdio.h>\n#define MAX(a,b) ((a)>(b)?(a):(b))",
  "x += 1; y -= 2; z *= 3; w /= 4; v %= 5;",
  "a && b || !c ^ d & e | f",
  "std::vector<std::unique_ptr<Foo>> v;",
  "fn main() -> Result<(), Box<dyn Error>> { Ok(()) }",
  "$ ls -la /usr/local/bin | grep -v '^d'",
  "    indented with four spaces",
  "\t\tindented with two tabs",
  "def f(x):\n\tif x:\n\t\treturn x\n\treturn None",
  "camelCaseIdentifier snake_case_identifier SCREAMING_CASE kebab-case",
  "__init__ __name__ == '__main__'",
  "regex: ^[a-zA-Z0-9_.+-]+@[a-zA-Z0-9-]+\\.[a-zA-Z0-9-.]+$",
  "path\\to\\windows\\file.txt",
  "// TODO: fix this!!!",
  "/* block\n   comment */",
  "print(f\"{name!r:>10}\")",
  "λx. x + 1",
];
const numbers = [
  "0", "7", "42", "123", "1234", "12345", "123456789", "1234567890123456789",
  "3.14159", "-2.5e-10", "1,000,000", "1 000 000", "2024-01-01", "12:34:56",
  "$5.99", "€100", "£3.50", "50%", "1st 2nd 3rd 4th 11th 12th 13th 21st",
  "0x1F 0b1010 0o777", "v1.2.3", "192.168.0.1", "+1 (555) 123-4567", "½ ¾ ⅓",
  "١٢٣ ٤٥٦", "०१२३", "一二三 四五六", "Ⅻ ⅷ", "²³ ₁₂", "９９",
];
const contractions = [];
for (const c of ["s", "t", "re", "ve", "m", "ll", "d"]) {
  contractions.push(`it'${c} we'${c} they'${c}`);
  contractions.push(`IT'${c.toUpperCase()} WE'${c.toUpperCase()}`);
  contractions.push(`It'${c[0].toUpperCase()}${c.slice(1)} '${c}`);
}
contractions.push("I'm sure you'll see it's what they've said we'd do, isn't it?");
contractions.push("I'M SURE YOU'LL SEE IT'S WHAT THEY'VE SAID WE'D DO, ISN'T IT?");
contractions.push("don't DON'T Don't dOn'T");
contractions.push("rock 'n' roll, 'tis, o'clock, y'all");
contractions.push("’s ’t curly apostrophes: it’s they’re");
const whitespace = [
  "", " ", "  ", "   ", "\t", "\n", "\r\n", "\n\n", "\n\n\n", " \n ", "\t\n\t",
  "a b", "a  b", "a   b", "a    b", "a\tb", "a\nb", "a\r\nb", "a\n\nb", "a \n b",
  " leading", "  two leading", "trailing ", "trailing   ", "  both  ",
  "tab\tseparated\tvalues\there", "line one\nline two\nline three",
  "end with newline\n", "\nstart with newline", "spaces   \n   around newline",
  "mixed \t \n \r whitespace", "\u00a0non-breaking\u00a0space", "thin\u2009space and\u3000ideographic",
  "word\u2028line separator", "x\u000by\u000cz",
];
const marks = [
  "e\u0301", "cafe\u0301", "café", "n\u0303", "A\u030a", "a\u0308\u0304",
  "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349\u035a\u032f\u031e\u0320\u034dA\u036b\u0357\u0334\u0362\u0335\u031c\u0330\u0354L\u0368\u0367\u0369\u0358\u0320G\u0311\u0357\u030e\u0305\u035b\u0341\u0334\u033b\u0348\u034d\u0354\u0339O\u0342\u030c\u030c\u0358\u0328\u0335\u0339\u033b\u031d\u0333",
  "\u1100\u1161\u11a8", "ḱṷṓn", "ǅ ǈ ǋ", "ﷺ", "Å Å Å",
];
const emoji = [
  "😀", "😀😃😄", "👍", "👍🏻 👍🏼 👍🏽 👍🏾 👍🏿", "👨‍👩‍👧‍👦", "👩🏽‍💻", "🏳️‍🌈", "🇫🇷🇯🇵🇺🇸",
  "1️⃣ #️⃣", "❤️ ♥ ❤", "I ❤️ NY 🗽", "🤷‍♀️🤦🏾‍♂️", "🧑‍🤝‍🧑", "emoji😀inside😀words",
  "👋 Hello! 🌍", "🐍 python 🦀 rust",
];
const specials = [
  "<|endoftext|>", "Hello<|endoftext|>world", "Hello <|endoftext|> world", "<|endoftext|><|endoftext|>",
  "<|endoftext", "<|endoftext|", "<<|endoftext|>>",
  "<s>", "</s>", "<unk>", "<s>Hello</s>", " <s> Hello </s> ", "<s><s></s>",
  "<|begin_of_text|>Hello<|end_of_text|>", "<|eot_id|>", "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
  "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n", "<|im_end|>", "<think>\nok\n</think>",
  "<|reserved_special_token_5|>", "<0xE2>", "▁", "▁▁hello", "Ġhello", "ĠĠ",
];
const long = [
  "a".repeat(1000),
  "supercalifragilisticexpialidocious".repeat(20),
  "Pneumonoultramicroscopicsilicovolcanoconiosis",
  "1234567890".repeat(50),
  "😀".repeat(100),
  "ab".repeat(300),
  " ".repeat(200),
  "\n".repeat(50),
  "xyzzy".repeat(100) + " end",
  "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. ".repeat(10),
  "漢".repeat(200),
  "-".repeat(300),
];
const odd = [
  "!", "?", ".", ",", "'", "\"", "''", "...", "!!!", "?!", "--", "—", "~", "@@", "##", "$$", "%%", "^^", "&&", "**",
  "\u0001\u0002\u0003", "\u007f", "\u0000nul", "\u200b zero\u200bwidth", "\u200d", "\u2060joiner", "\ufffd",
  "\u{10000}\u{1F600}\u{E0041}", "\u{10FFFD}", "a\u0300\u0301\u0302\u0303\u0304",
];
const ascii = [];
{
  let all = "";
  for (let c = 32; c < 127; ++c) all += String.fromCharCode(c);
  ascii.push(all);
  let latin = "";
  for (let c = 0xa1; c < 0x180; ++c) latin += String.fromCharCode(c);
  ascii.push(latin);
}
export const corpus = [...prose, ...code, ...numbers, ...contractions, ...whitespace, ...marks, ...emoji,
                       ...specials, ...long, ...odd, ...ascii];
