import { describe, expect, it } from 'vitest';

import { configModelView, type NetworkCliOptions } from '../lib/cli/network.js';
import { usesConfigFiles } from '../lib/cli/config.js';

const base: NetworkCliOptions = { url: ['http://127.0.0.1:1'], stream: true };

describe('--model and --config-model', () => {
  it("a network SUT's --model is the served model: no config files are read for it", () => {
    const view = configModelView({ ...base, sut: 'openai', model: 'llama', set: [] });
    expect(view.model).toBeUndefined();
    expect(usesConfigFiles(view)).toBe(false);
  });

  it('with --user-conf the lookups use --config-model, else --model', () => {
    expect(configModelView({ ...base, sut: 'openai', model: 'llama', userConf: 'u.conf', set: [] }).model).toBe('llama');
    expect(configModelView({ ...base, sut: 'openai', model: 'llama', userConf: 'u.conf', configModel: 'llama2-70b', set: [] }).model).toBe('llama2-70b');
    expect(usesConfigFiles(configModelView({ ...base, sut: 'kserve', model: 'm', configModel: 'resnet50', set: [] }))).toBe(true);
  });

  it('other SUTs: --model keeps its meaning, --config-model is the same', () => {
    expect(configModelView({ ...base, url: [], sut: 'null', model: 'resnet50', set: [] }).model).toBe('resnet50');
    expect(configModelView({ ...base, url: [], sut: 'null', configModel: 'bert', set: [] }).model).toBe('bert');
  });
});
