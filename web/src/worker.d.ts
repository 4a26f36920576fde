// The Worker entry `mano-score/worker`: load it as a module Worker and talk to it with
// ManoWorker from 'mano-score', or post { id, op, args } messages yourself.
export function handleMessage(
  message: { id: number; op: string; args?: unknown },
  post: (reply: { id: number; type: 'progress' | 'result' | 'error' | 'cancelled'; [key: string]: unknown }, transfer?: ArrayBuffer[]) => void,
): Promise<void>;
