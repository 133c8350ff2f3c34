// Placeholder until `model-gateway serve` lands (gateway core).
export async function runServe(_args: string[]): Promise<number | undefined> {
  process.stderr.write('model-gateway serve: not implemented yet\n');
  return 2;
}
