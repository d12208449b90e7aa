// Written by `npm run -s starts` (cli/starts.ts); do not edit. The starts in starts.bin: see
// workers/formats/shippedStarts.ts.
import type { ShippedStart } from '../../formats/shippedStarts';

export const SHIPPED_STARTS: readonly ShippedStart[] = [
  {
    "key": "[\"search\",{\"entities\":3,\"attributes\":2,\"values\":32,\"maxTurns\":3,\"hops\":2,\"noise\":0,\"noiseSchedule\":\"fixed\",\"noiseStart\":0,\"noiseBase\":4,\"noiseIters\":200,\"formatPenalty\":0,\"toolSteps\":3,\"toolValues\":3,\"distractors\":0,\"judgeNoise\":0,\"strictArgs\":false,\"toolReward\":\"outcome\",\"roleScale\":1,\"roleOffset\":0,\"symbols\":4,\"seqLen\":3,\"targets\":4,\"seqReward\":\"exact\",\"think\":0,\"rmNoise\":0,\"rmNoiseFloor\":0.1,\"rmUnsure\":0,\"rmUnsureOn\":\"any\"},{\"context\":8,\"embed\":16,\"hidden\":64},1,{\"mode\":\"pretrained\",\"steps\":40,\"demoNoise\":0.5,\"demos\":\"task\"},1]",
    "offset": 0,
    "length": 11982,
    "fnv": "b85c3d4a",
    "demoLoss": 1.0975019519710685,
    "demoSuccess": 0.17109375
  },
  {
    "key": "[\"search\",{\"entities\":3,\"attributes\":2,\"values\":32,\"maxTurns\":3,\"hops\":2,\"noise\":0,\"noiseSchedule\":\"fixed\",\"noiseStart\":0,\"noiseBase\":4,\"noiseIters\":200,\"formatPenalty\":0,\"toolSteps\":3,\"toolValues\":3,\"distractors\":0,\"judgeNoise\":0,\"strictArgs\":false,\"toolReward\":\"outcome\",\"roleScale\":1,\"roleOffset\":0,\"symbols\":4,\"seqLen\":3,\"targets\":4,\"seqReward\":\"exact\",\"think\":0,\"rmNoise\":0,\"rmNoiseFloor\":0.1,\"rmUnsure\":0,\"rmUnsureOn\":\"any\"},{\"context\":8,\"embed\":16,\"hidden\":64},1,{\"mode\":\"pretrained\",\"steps\":40,\"demoNoise\":0.5,\"demos\":\"task\"},2]",
    "offset": 11982,
    "length": 11982,
    "fnv": "219b3e40",
    "demoLoss": 1.1257975757691177,
    "demoSuccess": 0.158203125
  },
  {
    "key": "[\"search\",{\"entities\":3,\"attributes\":2,\"values\":32,\"maxTurns\":3,\"hops\":2,\"noise\":0,\"noiseSchedule\":\"fixed\",\"noiseStart\":0,\"noiseBase\":4,\"noiseIters\":200,\"formatPenalty\":0,\"toolSteps\":3,\"toolValues\":3,\"distractors\":0,\"judgeNoise\":0,\"strictArgs\":false,\"toolReward\":\"outcome\",\"roleScale\":1,\"roleOffset\":0,\"symbols\":4,\"seqLen\":3,\"targets\":4,\"seqReward\":\"exact\",\"think\":0,\"rmNoise\":0,\"rmNoiseFloor\":0.1,\"rmUnsure\":0,\"rmUnsureOn\":\"any\"},{\"context\":8,\"embed\":16,\"hidden\":64},1,{\"mode\":\"pretrained\",\"steps\":40,\"demoNoise\":0.5,\"demos\":\"task\"},3]",
    "offset": 23964,
    "length": 11982,
    "fnv": "9a9b2f26",
    "demoLoss": 1.1066786979267034,
    "demoSuccess": 0.15703125
  },
  {
    "key": "[\"search\",{\"entities\":3,\"attributes\":2,\"values\":32,\"maxTurns\":3,\"hops\":2,\"noise\":0,\"noiseSchedule\":\"fixed\",\"noiseStart\":0,\"noiseBase\":4,\"noiseIters\":200,\"formatPenalty\":0,\"toolSteps\":3,\"toolValues\":3,\"distractors\":0,\"judgeNoise\":0,\"strictArgs\":false,\"toolReward\":\"outcome\",\"roleScale\":1,\"roleOffset\":0,\"symbols\":4,\"seqLen\":3,\"targets\":4,\"seqReward\":\"exact\",\"think\":0,\"rmNoise\":0,\"rmNoiseFloor\":0.1,\"rmUnsure\":0,\"rmUnsureOn\":\"any\"},{\"context\":8,\"embed\":16,\"hidden\":64},1,{\"mode\":\"pretrained\",\"steps\":40,\"demoNoise\":0.5,\"demos\":\"task\"},4]",
    "offset": 35946,
    "length": 11982,
    "fnv": "6bb6536a",
    "demoLoss": 1.1080323315865301,
    "demoSuccess": 0.150390625
  },
  {
    "key": "[\"search\",{\"entities\":3,\"attributes\":2,\"values\":8,\"maxTurns\":3,\"hops\":1,\"noise\":0,\"noiseSchedule\":\"fixed\",\"noiseStart\":0,\"noiseBase\":4,\"noiseIters\":200,\"formatPenalty\":0,\"toolSteps\":3,\"toolValues\":3,\"distractors\":0,\"judgeNoise\":0,\"strictArgs\":false,\"toolReward\":\"outcome\",\"roleScale\":1,\"roleOffset\":0,\"symbols\":4,\"seqLen\":3,\"targets\":2,\"seqReward\":\"exact\",\"think\":0,\"rmNoise\":0,\"rmNoiseFloor\":0.1,\"rmUnsure\":0,\"rmUnsureOn\":\"any\"},{\"context\":8,\"embed\":16,\"hidden\":64},1,{\"mode\":\"pretrained\",\"steps\":40,\"demoNoise\":0.2,\"demos\":\"easy\"},1]",
    "offset": 47928,
    "length": 9795,
    "fnv": "cbad3c25",
    "demoLoss": 0.4906891211461405,
    "demoSuccess": 0.8046875
  },
  {
    "key": "[\"search\",{\"entities\":3,\"attributes\":2,\"values\":8,\"maxTurns\":3,\"hops\":1,\"noise\":0,\"noiseSchedule\":\"fixed\",\"noiseStart\":0,\"noiseBase\":4,\"noiseIters\":200,\"formatPenalty\":0,\"toolSteps\":3,\"toolValues\":3,\"distractors\":0,\"judgeNoise\":0,\"strictArgs\":false,\"toolReward\":\"outcome\",\"roleScale\":1,\"roleOffset\":0,\"symbols\":4,\"seqLen\":3,\"targets\":2,\"seqReward\":\"exact\",\"think\":0,\"rmNoise\":0,\"rmNoiseFloor\":0.1,\"rmUnsure\":0,\"rmUnsureOn\":\"any\"},{\"context\":8,\"embed\":16,\"hidden\":64},1,{\"mode\":\"pretrained\",\"steps\":40,\"demoNoise\":0.2,\"demos\":\"easy\"},2]",
    "offset": 57723,
    "length": 9795,
    "fnv": "7b870660",
    "demoLoss": 0.43669115182595086,
    "demoSuccess": 0.801171875
  },
  {
    "key": "[\"search\",{\"entities\":3,\"attributes\":2,\"values\":8,\"maxTurns\":3,\"hops\":1,\"noise\":0,\"noiseSchedule\":\"fixed\",\"noiseStart\":0,\"noiseBase\":4,\"noiseIters\":200,\"formatPenalty\":0,\"toolSteps\":3,\"toolValues\":3,\"distractors\":0,\"judgeNoise\":0,\"strictArgs\":false,\"toolReward\":\"outcome\",\"roleScale\":1,\"roleOffset\":0,\"symbols\":4,\"seqLen\":3,\"targets\":2,\"seqReward\":\"exact\",\"think\":0,\"rmNoise\":0,\"rmNoiseFloor\":0.1,\"rmUnsure\":0,\"rmUnsureOn\":\"any\"},{\"context\":8,\"embed\":16,\"hidden\":64},1,{\"mode\":\"pretrained\",\"steps\":40,\"demoNoise\":0.2,\"demos\":\"easy\"},3]",
    "offset": 67518,
    "length": 9795,
    "fnv": "fd57a7d6",
    "demoLoss": 0.45803083631480035,
    "demoSuccess": 0.7828125
  },
  {
    "key": "[\"search\",{\"entities\":3,\"attributes\":2,\"values\":8,\"maxTurns\":3,\"hops\":1,\"noise\":0,\"noiseSchedule\":\"fixed\",\"noiseStart\":0,\"noiseBase\":4,\"noiseIters\":200,\"formatPenalty\":0,\"toolSteps\":3,\"toolValues\":3,\"distractors\":0,\"judgeNoise\":0,\"strictArgs\":false,\"toolReward\":\"outcome\",\"roleScale\":1,\"roleOffset\":0,\"symbols\":4,\"seqLen\":3,\"targets\":2,\"seqReward\":\"exact\",\"think\":0,\"rmNoise\":0,\"rmNoiseFloor\":0.1,\"rmUnsure\":0,\"rmUnsureOn\":\"any\"},{\"context\":8,\"embed\":16,\"hidden\":64},1,{\"mode\":\"pretrained\",\"steps\":40,\"demoNoise\":0.2,\"demos\":\"easy\"},4]",
    "offset": 77313,
    "length": 9795,
    "fnv": "551d3b25",
    "demoLoss": 0.4681133377423703,
    "demoSuccess": 0.793359375
  }
];
