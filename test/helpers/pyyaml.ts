import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

// PyYAML (YAML 1.1, what Python users read YAML with) as a judge: it reads sgq's YAML as UTF-8
// bytes, `-o yaml` with safe_load (one document: a list of the records) and `-o yaml-stream`
// with safe_load_all (one document a record), and compares each record with Python's json
// reading of the matching NDJSON line, strictly: same types (True is not 1, 1.0 is not 1),
// floats by repr.
const JUDGE = String.raw`
import sys, json, yaml
def same(a, b):
    if type(a) is not type(b): return False
    if isinstance(a, float): return repr(a) == repr(b)
    if isinstance(a, list): return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict): return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b
def judge(yaml_bytes, ndjson, mode):
    try:
        docs = yaml.safe_load(yaml_bytes) if mode == 'yaml' else list(yaml.safe_load_all(yaml_bytes))
    except Exception as e:
        return {'ok': False, 'error': type(e).__name__ + ': ' + str(e)}
    if not isinstance(docs, list): return {'ok': False, 'error': 'read %r, not a list' % type(docs).__name__}
    want = [json.loads(l) for l in ndjson.split('\n') if l]
    if len(docs) != len(want): return {'ok': False, 'error': '%d documents for %d records' % (len(docs), len(want))}
    for i, (d, w) in enumerate(zip(docs, want)):
        if not same(d, w): return {'ok': False, 'error': 'document %d: read %r, JSON has %r' % (i, d, w)}
    return {'ok': True, 'documents': len(docs)}
if len(sys.argv) == 4:
    print(json.dumps(judge(open(sys.argv[1], 'rb').read(), open(sys.argv[2], encoding='utf-8').read(), sys.argv[3])))
else:
    for line in sys.stdin:
        req = json.loads(line)
        try: data = req['yaml'].encode('utf-8')
        except UnicodeEncodeError as e: print(json.dumps({'ok': False, 'error': 'not UTF-8: ' + str(e)}), flush=True); continue
        print(json.dumps(judge(data, req['ndjson'], req['mode'])), flush=True)
`;

export interface Verdict {
  ok: boolean;
  error?: string;
  /** The records read: the list's items (yaml) or the documents (yaml-stream). */
  documents?: number;
}

/** How the YAML is read: `yaml` with safe_load (one list), `yaml-stream` with safe_load_all. */
export type YamlMode = 'yaml' | 'yaml-stream';

/** PyYAML's verdict on a YAML file against an NDJSON file, both as written by sgq. */
export async function pyyamlJudgesFiles(yamlFile: string, ndjsonFile: string, mode: YamlMode): Promise<Verdict> {
  const { execa } = await import('execa');
  const r = await execa('python3', ['-c', JUDGE, yamlFile, ndjsonFile, mode], { reject: false });
  if (r.exitCode !== 0) throw new Error(`python3 failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as Verdict;
}

/** One python3 for many verdicts (a property test asks hundreds). */
export function pyyamlJudge(): { judge(yaml: string, ndjson: string, mode: YamlMode): Promise<Verdict>; close(): void } {
  const child: ChildProcessWithoutNullStreams = spawn('python3', ['-c', JUDGE]);
  const waiting: ((v: Verdict) => void)[] = [];
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  createInterface({ input: child.stdout }).on('line', (line) => waiting.shift()?.(JSON.parse(line) as Verdict));
  return {
    judge(yaml, ndjson, mode) {
      return new Promise((resolve, reject) => {
        if (child.exitCode !== null) reject(new Error(`python3 ended: ${stderr}`));
        waiting.push(resolve);
        child.stdin.write(`${JSON.stringify({ yaml, ndjson, mode })}\n`);
      });
    },
    close: () => child.kill(),
  };
}
