# frozen_string_literal: true

require 'spec_helper'
require 'puppet_x/clone_army/helper'

describe PuppetX::CloneArmy::Helper do
  subject(:helper) { described_class.new(path) }

  include_context 'with a helper binary'

  let(:path) { helper_path }

  def expect_run(args, fixture, exitstatus = 0)
    expect_helper(args, fixture, exitstatus)
  end

  def stub_stdout(stdout, exitstatus)
    allow(PuppetX::CloneArmy::Runner).to receive(:run)
      .and_return(PuppetX::CloneArmy::Runner::Result.new(stdout, '', exitstatus))
  end

  describe '.resolve_path' do
    it 'takes an explicit path as is' do
      expect(described_class.resolve_path('/opt/x/clone-army')).to eq('/opt/x/clone-army')
    end

    it 'takes /usr/local/sbin/clone-army, where class clone_army installs it, without one given' do
      expect(described_class.resolve_path(nil)).to eq('/usr/local/sbin/clone-army')
      expect(described_class.resolve_path('')).to eq('/usr/local/sbin/clone-army')
    end

    # Whatever a PATH names (a directory a user can write, early on the PATH
    # of a root shell) would run as root with what Puppet passes it.
    it 'never runs a clone-army planted on the PATH, even where none is installed' do
      allow(File).to receive(:executable?).and_call_original
      allow(File).to receive(:executable?).with('/usr/local/sbin/clone-army').and_return(false)
      allow(Puppet::Util).to receive(:which).and_return('/home/someone/bin/clone-army')
      expect(described_class.resolve_path(nil)).to eq('/usr/local/sbin/clone-army')
      expect(Puppet::Util).not_to have_received(:which)
    end

    it 'says a missing helper is missing where it was looked for, not somewhere on the PATH' do
      helper = described_class.new('/nonexistent/clone-army')
      expect { helper.base_list }.to raise_error(PuppetX::CloneArmy::HelperError) { |e|
        expect(e.kind).to eq('helper-missing')
        expect(e.message).to include('/nonexistent/clone-army')
        expect(e.message).not_to include('PATH')
      }
    end
  end

  describe 'verbs (argv arrays, never a shell string; names after --)' do
    it 'base list' do
      expect_run(['base', 'list', '--format', 'json'], 'base_list.json')
      expect(helper.base_list.map { |base| base['name'] }).to eq(['debian-12'])
    end

    it 'base create with defaults from the host' do
      expect_run(['base', 'create', '--', 'debian-12'], 'base_create.json')
      expect(helper.base_create('debian-12')['release']).to eq('bookworm')
    end

    it 'base create with every option' do
      expect_run(['base', 'create', '--os', 'debian', '--release', 'bookworm', '--mirror', 'http://deb.debian.org/debian',
                  '--puppet-source', 'distro', '--', 'debian-12'], 'base_create.json')
      helper.base_create('debian-12', os: :debian, release: 'bookworm', mirror: 'http://deb.debian.org/debian',
                                      puppet_source: :distro)
    end

    it 'base create for PE, with the primary server' do
      expect_run(['base', 'create', '--puppet-source', 'pe', '--server', 'puppet.example.com', '--pe-ca-cert', '/ca.pem',
                  '--', 'debian-12'], 'base_create.json')
      helper.base_create('debian-12', puppet_source: :pe, server: 'puppet.example.com', pe_ca_cert: '/ca.pem')
    end

    it 'clone configure with load-shape flags in the documented order' do
      expect_run(['clone', 'configure', '--run-mode', 'timer', '--runinterval', '900', '--tasks-max', 'none',
                  '--facts-file', '/tmp/f.json', '--churn-percent', '0', '--', 'clone1'], 'clone_configure.json')
      helper.clone_configure('clone1', shape: { churn_percent: 0, facts_file: '/tmp/f.json', tasks_max: 'none',
                                                runinterval: 900, run_mode: :timer })
    end

    it 'refuses a load-shape setting it has no flag for' do
      expect { described_class.shape_options(facts: {}) }.to raise_error(ArgumentError, %r{unknown load-shape settings: facts})
    end

    it 'base remove' do
      expect_run(['base', 'remove', '--', 'debian-12'], 'base_remove.json')
      expect(helper.base_remove('debian-12')).to eq('name' => 'debian-12', 'changed' => true)
    end

    it 'clone list' do
      expect_run(['clone', 'list', '--format', 'json'], 'clone_list.json')
      expect(helper.clone_list.map { |clone| [clone['name'], clone['state']] })
        .to eq([['clone1', 'running'], ['clone2', 'stopped']])
    end

    it 'clone list of no clones is an empty list' do
      expect_run(['clone', 'list', '--format', 'json'], 'clone_list_empty.json')
      expect(helper.clone_list).to eq([])
    end

    it 'clone create --start' do
      expect_run(['clone', 'create', '--base', 'debian-12', '--server', 'puppet.example.com',
                  '--certname', 'clone3.loadhost.example.com', '--start', '--', 'clone3'], 'clone_create.json')
      clone = helper.clone_create('clone3', base: 'debian-12', server: 'puppet.example.com',
                                            certname: 'clone3.loadhost.example.com', start: true)
      expect(clone['state']).to eq('running')
    end

    it 'clone create without --start' do
      expect_run(['clone', 'create', '--base', 'debian-12', '--server', 'puppet.example.com',
                  '--certname', 'clone3.loadhost.example.com', '--', 'clone3'], 'clone_create_stopped.json')
      helper.clone_create('clone3', base: 'debian-12', server: 'puppet.example.com',
                                    certname: 'clone3.loadhost.example.com', start: false)
    end

    it 'clone create-many: one line of clone create arguments per clone, in a file removed afterwards' do
      seen = {}
      expect(PuppetX::CloneArmy::Runner).to receive(:run) do |argv, options|
        expect(argv.take(3)).to eq([helper_path, 'clone', 'create-many'])
        expect(options).to eq(timeout: 3600)
        seen[:file] = argv[3]
        expect(File.stat(argv[3]).mode & 0o777).to eq(0o600)
        expect(File.read(argv[3]).lines.map { |line| JSON.parse(line) }).to eq(
          [['--base', 'debian-12', '--server', 'puppet.example.com', '--certname', 'clone1.load', '--', 'clone1'],
           ['--base', 'debian-12', '--certname', 'clone2.load', '--run-mode', 'apply', '--', 'clone2']],
        )
        helper_output('generated/clone_create_many_clone1_clone2_clone3.json')
      end
      clones = helper.clone_create_many(
        'clone1' => { base: 'debian-12', server: 'puppet.example.com', certname: 'clone1.load' },
        'clone2' => { base: 'debian-12', server: nil, certname: 'clone2.load', shape: { run_mode: 'apply' } },
      )
      expect(clones.map { |clone| clone['name'] }).to eq(['clone1', 'clone2', 'clone3'])
      expect(File.exist?(seen[:file])).to be false
    end

    it 'clone create-many: an answer without a clone asked for is malformed' do
      allow(PuppetX::CloneArmy::Runner).to receive(:run).and_return(helper_output('generated/clone_create_many_clone3.json'))
      expect { helper.clone_create_many('clone1' => { base: 'b', server: 's', certname: 'c' }) }
        .to raise_error(Puppet::Error, %r{lacks clone1})
    end

    it 'clone configure with only what changed' do
      expect_run(['clone', 'configure', '--server', 'puppet2.example.com', '--', 'clone1'], 'clone_configure.json')
      expect(helper.clone_configure('clone1', server: 'puppet2.example.com')['server']).to eq('puppet2.example.com')
    end

    it 'clone configure with a server port' do
      expect_run(['clone', 'configure', '--server', 'puppet2.example.com', '--server-port', '8141', '--', 'clone1'],
                 'clone_configure.json')
      helper.clone_configure('clone1', server: 'puppet2.example.com', server_port: 8141)
    end

    it 'clone configure with server and certname' do
      expect_run(['clone', 'configure', '--server', 'puppet2.example.com', '--certname', 'c1.example.com', '--', 'clone1'],
                 'clone_configure.json')
      helper.clone_configure('clone1', server: 'puppet2.example.com', certname: 'c1.example.com')
    end

    it 'clone start, stop and remove' do
      expect_run(['clone', 'start', '--', 'clone2'], 'clone_start.json')
      expect_run(['clone', 'stop', '--', 'clone1'], 'clone_stop.json')
      expect_run(['clone', 'remove', '--', 'clone1'], 'clone_remove.json')
      expect(helper.clone_start('clone2').first['state']).to eq('running')
      expect(helper.clone_stop('clone1').first['state']).to eq('stopped')
      expect(helper.clone_remove('clone1')['removed']).to eq(['clone1'])
    end

    it 'clone start over a ramp-up' do
      expect_run(['clone', 'start', '--ramp-up', '30', '--', 'clone1', 'clone2', 'clone3'],
                 'generated/clone_start_clone1_clone2_clone3.json')
      expect(helper.clone_start('clone1', 'clone2', 'clone3', ramp_up: 30).map { |c| c['name'] }).to eq(['clone1', 'clone2', 'clone3'])
    end
  end

  describe 'warnings in the answer' do
    it 'become Puppet warnings naming the call, on success and on failure' do
      answer = { protocol: 2, ok: true, result: { removed: ['clone1'], changed: true },
                 warnings: ['removed /etc/systemd/system/.x.clone-army-1, left by a clone-army that was killed'] }
      expect(Puppet).to receive(:warning).with('clone-army clone remove -- clone1: removed /etc/systemd/system/.x.clone-army-1, ' \
                                               'left by a clone-army that was killed')
      expect(helper.parse(answer.to_json, 0, [path, 'clone', 'remove', '--', 'clone1'])['removed']).to eq(['clone1'])
      failed = { protocol: 2, ok: false, error: { kind: 'io', message: 'no', causes: [] }, warnings: ['kernel limits will not persist'] }
      expect(Puppet).to receive(:warning).with(%r{kernel limits will not persist})
      expect { helper.parse(failed.to_json, 1, [path, 'clone', 'list']) }.to raise_error(PuppetX::CloneArmy::HelperError)
    end
  end

  describe 'answers that do not describe what was asked for' do
    # A name where the protocol has an object is not an answer the helper gives.
    def name_only(key, name)
      PuppetX::CloneArmy::Runner::Result.new({ protocol: 2, ok: true, result: { key => name, changed: true } }.to_json, '', 0)
    end

    it 'refuses a base or clone given by its name only' do
      allow(PuppetX::CloneArmy::Runner).to receive(:run).and_return(name_only('base', 'ubuntu-jammy'))
      expect { helper.base_create('ubuntu-jammy') }
        .to raise_error(PuppetX::CloneArmy::HelperError, %r{"result"."base" is not an object with the name "ubuntu-jammy"})
    end

    it 'refuses a start answer of names' do
      allow(PuppetX::CloneArmy::Runner).to receive(:run)
        .and_return(PuppetX::CloneArmy::Runner::Result.new('{"protocol":2,"ok":true,"result":{"clones":["clone1"]}}', '', 0))
      expect { helper.clone_start('clone1') }.to raise_error(PuppetX::CloneArmy::HelperError, %r{holds "clone1", not a clone})
    end

    it 'refuses an object describing another clone' do
      expect_run(['clone', 'create', '--base', 'b', '--server', 'm', '--certname', 'c', '--', 'clone2'],
                 'generated/clone_create_clone1.json')
      expect { helper.clone_create('clone2', base: 'b', server: 'm', certname: 'c', start: false) }
        .to raise_error(PuppetX::CloneArmy::HelperError, %r{not an object with the name "clone2"})
    end

    it 'refuses a start answer that leaves out a clone asked for' do
      expect_run(['clone', 'start', '--', 'clone1', 'clone3'], 'generated/clone_start_clone1.json')
      expect { helper.clone_start('clone1', 'clone3') }
        .to raise_error(PuppetX::CloneArmy::HelperError, %r{"result"."clones" lacks clone3})
    end
  end

  describe 'answers captured from the real helper (captured_*.json)' do
    Dir[File.join(HelperFixtures::DIR, 'captured_*.json')].sort.each do |file|
      it "reads #{File.basename(file)}" do
        text = File.read(file)
        document = JSON.parse(text)
        if document['ok']
          expect(helper.parse(text, 0, [path, 'captured'])).to eq(document['result'])
        else
          expect { helper.parse(text, 1, [path, 'captured']) }.to raise_error(PuppetX::CloneArmy::HelperError) { |error|
            expect(error.kind).to eq(document['error']['kind'])
            expect(error.message).to include(document['error']['message'])
          }
        end
      end
    end
  end

  describe 'failures' do
    it 'reports a missing helper clearly, without running anything' do
      missing = described_class.new(File.join(@helper_dir, 'nope', 'clone-army'))
      expect(PuppetX::CloneArmy::Runner).not_to receive(:run)
      expect { missing.clone_list }.to raise_error(PuppetX::CloneArmy::HelperError) { |error|
        expect(error.kind).to eq('helper-missing')
        expect(error.message).to match(%r{not installed at .*/nope/clone-army: class clone_army installs it there})
      }
    end

    describe 'a prefetch on a host without the helper' do
      let(:resources) do
        { 'clone1' => Puppet::Type.type(:clone_army_clone).new(name: 'clone1', helper: File.join(@helper_dir, 'nope', 'clone-army')) }
      end

      it 'lists nothing in a --noop run, so that the run previews the fleet' do
        Puppet[:noop] = true
        expect(Puppet).to receive(:notice).with(%r{helper is not installed at .*/nope/clone-army; in this --noop run})
        expect(described_class.listing_for_preview(resources, :clone_list)).to eq([])
      ensure
        Puppet[:noop] = false
      end

      it 'fails a real run, saying what to do' do
        expect { described_class.listing_for_preview(resources, :clone_list) }
          .to raise_error(PuppetX::CloneArmy::HelperError, %r{not installed at})
      end
    end

    it 'stops a helper that hangs at its time limit (an hour for a base build, 15 minutes otherwise)' do
      expect(described_class.timeout_for(['base', 'create', '--os', 'debian'])).to eq(3600)
      expect(described_class.timeout_for(['clone', 'list'])).to eq(900)
      expect(described_class.timeout_for(['clone', 'start', '--', 'clone1'])).to eq(900)
      expect(PuppetX::CloneArmy::Runner).to receive(:run).with([helper_path, 'clone', 'list', '--format', 'json'], timeout: 900)
                                                         .and_raise(PuppetX::CloneArmy::Runner::Timeout.new([helper_path], 900))
      expect { helper.clone_list }.to raise_error(PuppetX::CloneArmy::HelperError) { |error|
        expect(error.kind).to eq('helper-timeout')
        expect(error.message).to include('clone-army clone list --format json failed:', 'did not finish within 900 s')
      }
    end

    it 'takes its time limits from the helper\'s schema, which holds them beside the helper\'s own waits' do
      waits = PuppetX::CloneArmy::Schema.fetch('waits')
      expect(described_class.timeout_for(['clone', 'list'])).to eq(waits['call_seconds'])
      expect(described_class.timeout_for(['clone', 'create-many', '/tmp/b'])).to eq(waits['long_call_seconds']['clone create-many'])
      expect(waits['call_seconds']).to be > waits['lock_seconds'] + waits['daemon_reload_seconds'] + waits['unit_state_seconds']
    end

    it 'does not cut a ramp-up longer than the call limit: clone start gets the limit plus the ramp' do
      longest = PuppetX::CloneArmy::Schema.range(:ramp_up).max
      expect(described_class.timeout_for(['clone', 'start', '--ramp-up', '3600', '--', 'clone1'])).to eq(900 + 3600)
      expect(described_class.timeout_for(['clone', 'start', '--ramp-up', longest.to_s, '--', 'c1'])).to eq(900 + longest)
      # A name after `--` is a name, never a ramp.
      expect(described_class.timeout_for(['clone', 'start', '--', '--ramp-up', '5'])).to eq(900)
      expect(PuppetX::CloneArmy::Runner).to receive(:run)
        .with([helper_path, 'clone', 'start', '--ramp-up', '1800', '--', 'clone1'], timeout: 900 + 1800)
        .and_raise(PuppetX::CloneArmy::Runner::Timeout.new([helper_path], 2700))
      expect { helper.clone_start('clone1', ramp_up: 1800) }.to raise_error(PuppetX::CloneArmy::HelperError) { |error|
        expect(error.kind).to eq('helper-timeout')
      }
    end

    it 'asks the helper for a ramp run\'s limit, and fails with its refusal of the ramp\'s arguments before running it' do
      args = ['ramp', 'run', '--output', '/tmp/b.json', '--interval', '1800', '--step', '25', '--max-clones', '100', '--hold', '60']
      expect(PuppetX::CloneArmy::Runner).to receive(:run)
        .with([helper_path, 'ramp', 'longest', *args.drop(2)], timeout: 900).once
        .and_return(helper_output('generated/ramp_longest_refused.json', 2))
      expect { helper.run(*args) }.to raise_error(PuppetX::CloneArmy::HelperError) { |error|
        expect([error.kind, error.field]).to eq(['invalid-argument', 'hold'])
        expect(error.message).to include('a step holds at least the run interval (1800 s)')
      }
    end

    it 'shortens every limit, ramps included, when the schema\'s call limit is lower (as the acceptance test lowers it)' do
      waits = PuppetX::CloneArmy::Schema.fetch('waits').merge('call_seconds' => 20)
      expect(described_class.timeout_for(['clone', 'list'], waits: waits)).to eq(20)
      expect(described_class.timeout_for(['clone', 'start', '--ramp-up', '60', '--', 'c1'], waits: waits)).to eq(80)
    end

    it 'turns ok:false with a non-zero exit into a Puppet::Error with the kind, message, field and causes' do
      expect_run(['clone', 'create', '--base', 'debian-13', '--server', 'p', '--certname', 'c', '--', 'clone1'],
                 'error_not_found.json', 1)
      expect {
        helper.clone_create('clone1', base: 'debian-13', server: 'p', certname: 'c', start: false)
      }.to raise_error(Puppet::Error) { |error|
        expect(error).to be_a(PuppetX::CloneArmy::HelperError)
        expect(error.kind).to eq('not-found')
        expect(error.field).to eq('base')
        expect(error.exitstatus).to eq(1)
        expect(error.message).to eq(
          'clone-army clone create --base debian-13 --server p --certname c -- clone1 failed [not-found]: ' \
          'base "debian-13" does not exist (field: base); caused by: no directory /var/lib/puppet-clone-army/debian-13',
        )
      }
    end

    it 'reports the causes of a systemd failure' do
      expect_run(['clone', 'start', '--', 'clone2'], 'error_systemd.json', 1)
      expect { helper.clone_start('clone2') }.to raise_error(
        PuppetX::CloneArmy::HelperError,
        %r{\[systemd\]: starting puppet-clone-army@clone2.service failed; caused by: .*UnitFailed.*; timeout after 60s},
      )
    end

    it 'reports usage errors (exit 2)' do
      stub_stdout(helper_fixture('error_usage.json'), 2)
      expect { helper.clone_list }.to raise_error(PuppetX::CloneArmy::HelperError, %r{\[usage\]: CLONE_ARMY_SYSTEMD is a test}) { |error|
        expect(error.kind).to eq('usage')
      }
    end

    it 'treats ok:false as a failure even with exit status 0' do
      stub_stdout(helper_fixture('base_remove_in_use.json'), 0)
      expect { helper.base_remove('debian-12') }.to raise_error(PuppetX::CloneArmy::HelperError, %r{\[base-in-use\]})
    end

    {
      'a panic message instead of JSON' => ['malformed.txt', 101, %r{exit status 101\): not JSON}, 'malformed-output'],
      'truncated JSON' => ['truncated.json', 0, %r{not JSON}, 'malformed-output'],
      'another protocol version' => ['protocol_99.json', 0, %r{protocol version 99}, 'protocol-mismatch'],
    }.each do |what, (fixture, status, message, kind)|
      it "refuses #{what} (never read as 'no clones')" do
        stub_stdout(helper_fixture(fixture), status)
        expect { helper.clone_list }.to raise_error(PuppetX::CloneArmy::HelperError, message) { |error|
          expect(error.kind).to eq(kind)
        }
      end
    end

    it 'refuses empty output (never read as "no clones")' do
      stub_stdout('', 0)
      expect { helper.clone_list }.to raise_error(PuppetX::CloneArmy::HelperError, %r{no output on stdout})
    end

    it 'says what a helper that refused its command line said on stderr, escaped' do
      allow(PuppetX::CloneArmy::Runner).to receive(:run)
        .and_return(PuppetX::CloneArmy::Runner::Result.new('', "clone-army: unexpected argument '--bogus' found\e[2J\n", 2))
      said = %r{exit status 2\): no output on stdout; it said: clone-army: unexpected argument '--bogus' found\\e\[2J}
      expect { helper.clone_list }.to raise_error(PuppetX::CloneArmy::HelperError, said)
    end

    it 'refuses empty output of a failing helper' do
      stub_stdout("\n", 1)
      expect { helper.clone_list }.to raise_error(PuppetX::CloneArmy::HelperError, %r{exit status 1\): no output})
    end

    it 'refuses a newer protocol version, saying to upgrade the module' do
      ours = PuppetX::CloneArmy::Helper::PROTOCOL_VERSION
      stub_stdout(%({"protocol": #{ours + 1}, "ok": true, "result": {"clones": []}}), 0)
      expect { helper.clone_list }.to raise_error(PuppetX::CloneArmy::HelperError) { |error|
        expect(error.kind).to eq('protocol-mismatch')
        expect(error.message).to include("answered in protocol version #{ours + 1}; this module speaks version #{ours}: " \
                                         'the helper is newer than the module: upgrade the clone_army module')
        expect(error.message).to include("(helper: #{helper_path})")
      }
    end

    it 'refuses an older protocol version, saying to upgrade the helper' do
      ours = PuppetX::CloneArmy::Helper::PROTOCOL_VERSION
      stub_stdout(%({"protocol": #{ours - 1}, "ok": true, "result": {"clones": []}}), 0)
      expect { helper.clone_list }.to raise_error(PuppetX::CloneArmy::HelperError) { |error|
        expect(error.kind).to eq('protocol-mismatch')
        expect(error.message).to include("answered in protocol version #{ours - 1}; this module speaks version #{ours}: " \
                                         "the helper is older than the module: upgrade the helper to this module's release")
      }
    end

    it 'refuses a document without a protocol version' do
      stub_stdout('{"ok": true, "result": {"clones": []}}', 0)
      expect { helper.clone_list }.to raise_error(PuppetX::CloneArmy::HelperError,
                                                  %r{protocol version nil; .*not an answer of a clone-army helper})
    end

    {
      'a JSON array' => ['[]', 0, %r{not a JSON object}],
      'a missing ok' => ['{"protocol": 2, "result": {}}', 0, %r{"ok" is neither true nor false}],
      'ok:true with a non-zero exit' => ['{"protocol": 2, "ok": true, "result": {"clones": []}}', 1, %r{"ok": true with exit status 1}],
      'a missing result' => ['{"protocol": 2, "ok": true}', 0, %r{"result" is missing}],
      'a result without clones' => ['{"protocol": 2, "ok": true, "result": {}}', 0, %r{"result"."clones" is not a list}],
      'a clone without a name' => ['{"protocol": 2, "ok": true, "result": {"clones": [{"state": "running"}]}}', 0,
                                   %r{"result"."clones" is not a list of objects with a name}],
      'a clone in an unknown state' => ['{"protocol": 2, "ok": true, "result": {"clones": [{"name": "clone1", "state": "zombie"}]}}', 0,
                                        %r{lacks a name or a state}],
      'an error without a kind' => ['{"protocol": 2, "ok": false, "error": {"message": "x"}}', 1, %r{malformed error}],
    }.each do |what, (stdout, status, message)|
      it "refuses #{what}" do
        stub_stdout(stdout, status)
        expect { helper.clone_list }.to raise_error(PuppetX::CloneArmy::HelperError, message)
      end
    end
  end
end
