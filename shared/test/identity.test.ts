// The identity a service reads from the gateway's headers (identity.ts): trusted only
// with the internal credential, and a team's settings read once per header value.
import { defaultTeamSettings, HEADER, identityHeaders, readIdentity, type Identity } from '../src/identity.ts';

const TOKEN = 'internal-token-of-this-test';

const identity = (timezone: string): Identity => ({
  teamId: 'team_1',
  userId: 'user_1',
  scopes: ['read', 'write'],
  settings: { ...defaultTeamSettings(timezone), case_phases: ['recebido', 'triagem'] },
});

describe('readIdentity', () => {
  it('when the internal credential is wrong or missing, then no identity, also after the right one was read', () => {
    const headers = identityHeaders(identity('America/Manaus'), TOKEN);
    expect(readIdentity(headers, TOKEN)).not.toBeNull();
    expect(readIdentity({ ...headers, [HEADER.internalToken]: `${TOKEN}x` }, TOKEN)).toBeNull();
    expect(readIdentity({ ...headers, [HEADER.internalToken]: undefined }, TOKEN)).toBeNull();
    expect(readIdentity(headers, 'another-token')).toBeNull();
  });

  it("when a team's requests carry the same settings header, then each reads the team's settings, one frozen object, and another header its own", () => {
    const manaus = identityHeaders(identity('America/Manaus'), TOKEN);
    const first = readIdentity(manaus, TOKEN)!;
    const again = readIdentity({ ...manaus }, TOKEN)!;
    expect(first.settings).toEqual(identity('America/Manaus').settings);
    expect(again.settings).toBe(first.settings);
    expect(Object.isFrozen(first.settings.case_phases)).toBe(true);
    expect(() => first.settings.case_phases.push('x')).toThrow(TypeError);
    const recife = readIdentity(identityHeaders(identity('America/Recife'), TOKEN), TOKEN)!;
    expect(recife.settings.timezone).toBe('America/Recife');
    expect(readIdentity(manaus, TOKEN)!.settings.timezone).toBe('America/Manaus');
  });

  it('when the court calendar in the header has closures and no jurisdiction, then the closures are kept and the jurisdiction is the national calendar', () => {
    const closures = [{ date: '2025-03-06', name: 'Fórum sem energia' }];
    const settings = { ...identity('America/Manaus').settings, court_calendar: { closures } };
    const headers = {
      ...identityHeaders(identity('America/Manaus'), TOKEN),
      [HEADER.settings]: Buffer.from(JSON.stringify(settings)).toString('base64url'),
    };
    expect(readIdentity(headers, TOKEN)!.settings.court_calendar).toEqual({
      jurisdiction: { uf: null, branch: 'state' },
      closures,
    });
  });

  it('when the settings header is missing or malformed, then the default settings', () => {
    const headers = identityHeaders(identity('America/Manaus'), TOKEN);
    for (const settings of [undefined, 'not-base64-json', Buffer.from('{"timezone":""}').toString('base64url')]) {
      expect(readIdentity({ ...headers, [HEADER.settings]: settings }, TOKEN)!.settings).toEqual(defaultTeamSettings());
    }
  });
});
