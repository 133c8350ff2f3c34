// Placeholder until `model-gateway check` lands (issue: offline check for GitOps pipelines).
export async function runCheck(_args: string[]): Promise<number> {
  process.stderr.write('model-gateway check: not implemented yet\n');
  return 2;
}
