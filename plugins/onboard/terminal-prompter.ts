/**
 * The wizard's steps as terminal prompts (@clack/prompts, loaded only for an interactive
 * `claw onboard`). Secrets are typed into a masked field; Ctrl-C ends the wizard.
 */
import type { Prompter, WizardStep, WizardValue } from './wizard-types.js';
import { WizardCancelled } from './wizard-types.js';

type Clack = typeof import('@clack/prompts');

/** A QR payload as terminal text (half blocks, colours swapped so it reads dark on light). */
async function qrText(payload: string): Promise<string> {
  const QRCode = await import('qrcode');
  return QRCode.toString(payload, {
    type: 'utf8',
    errorCorrectionLevel: 'L',
    margin: 2,
    color: { dark: '#ffffff', light: '#000000' },
  });
}

export async function terminalPrompter(): Promise<Prompter & { clack: Clack }> {
  const clack = await import('@clack/prompts');
  const answered = <T>(value: T): Exclude<T, symbol> => {
    if (clack.isCancel(value)) throw new WizardCancelled();
    return value as Exclude<T, symbol>;
  };
  const message = (step: WizardStep) => step.message ?? step.title ?? step.id;
  let shownQr: string | undefined;

  return {
    clack,
    async ask(step: WizardStep): Promise<WizardValue> {
      if (step.error) clack.log.error(step.error);
      switch (step.type) {
        case 'note':
          clack.note(step.message ?? '', step.title);
          return undefined;
        case 'progress':
          if (step.qr && step.qr !== shownQr) {
            shownQr = step.qr;
            process.stdout.write(`\n${await qrText(step.qr)}\n`);
          }
          clack.log.info(step.message ?? '');
          return undefined;
        case 'select':
          return answered(
            await clack.select({
              message: message(step),
              options: (step.options ?? []).map((option) => ({
                value: option.value,
                label: option.label,
                ...(option.hint ? { hint: option.hint } : {}),
              })),
              initialValue: step.initialValue as string | undefined,
            }),
          );
        case 'multiselect':
          return answered(
            await clack.multiselect({
              message: `${message(step)} (space to pick, enter to go on)`,
              options: (step.options ?? []).map((option) => ({
                value: option.value,
                label: option.label,
                ...(option.hint ? { hint: option.hint } : {}),
              })),
              initialValues: (step.initialValue as string[] | undefined) ?? [],
              required: false,
            }),
          );
        case 'confirm':
          return answered(await clack.confirm({ message: message(step), initialValue: step.initialValue !== false }));
        case 'text':
          if (step.sensitive)
            return (
              answered(
                await clack.password({
                  message: step.placeholder ? `${message(step)} (${step.placeholder})` : message(step),
                }),
              ) ?? ''
            );
          return (
            answered(
              await clack.text({
                message: message(step),
                ...(step.placeholder ? { placeholder: step.placeholder } : {}),
                ...(typeof step.initialValue === 'string' ? { initialValue: step.initialValue } : {}),
              }),
            ) ?? ''
          );
      }
    },
    async working<T>(text: string, work: () => Promise<T>): Promise<T> {
      const spin = clack.spinner();
      spin.start(text);
      try {
        const result = await work();
        spin.stop(`${text.replace(/…$/, '')}: done`);
        return result;
      } catch (error) {
        spin.error(`${text.replace(/…$/, '')}: failed`);
        throw error;
      }
    },
  };
}
