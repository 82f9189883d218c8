# frozen_string_literal: true

require 'spec_helper'
require 'puppet_x/clone_army/record_dir'

# The recorder's service: what class clone_army writes into its unit, and
# what it does with the service when recording is off.
describe 'clone_army' do
  let(:node) { 'loadhost.example.com' }
  let(:unit_file) { '/etc/systemd/system/puppet-clone-army-record.service' }
  let(:facts) do
    { kernel: 'Linux',
      os: { 'name' => 'Debian', 'family' => 'Debian', 'hardware' => 'x86_64', 'architecture' => 'amd64',
            'release' => { 'major' => '12', 'full' => '12' } },
      memory: { 'system' => { 'total_bytes' => 24 * (1024**3) } },
      networking: { 'fqdn' => node } }
  end
  let(:base_params) { { server: 'puppet.example.com', num_clones: 2, runinterval: 600 } }
  let(:unit) { catalogue.resource('File', unit_file)[:content] }
  let(:exec_start) { unit[%r{^ExecStart=(.*)$}, 1] }

  context 'without record (the default)' do
    let(:params) { base_params }

    it 'stops the service and then removes its unit' do
      is_expected.to contain_service('puppet-clone-army-record').with(ensure: 'stopped', enable: false)
      is_expected.to contain_file(unit_file).with_ensure('absent').that_requires('Service[puppet-clone-army-record]')
    end
  end

  context 'with record => true' do
    let(:params) { base_params.merge(record: true) }

    it { is_expected.to compile.with_all_deps }

    it 'records into the default timeline, asking the clones\' server, with the helper\'s sampling period' do
      expect(exec_start).to eq('"/usr/local/sbin/clone-army" "record" "--output" ' \
                               '"/var/log/puppet-clone-army/timeline.jsonl" "--interval" "600" "--server" "puppet.example.com"')
      expect(unit).to include("ReadWritePaths=/var/log/puppet-clone-army\n", "ProtectSystem=strict\n",
                              "Restart=always\n", "WantedBy=multi-user.target\n")
      is_expected.to contain_file('/var/log/puppet-clone-army').with(ensure: 'directory', mode: nil, owner: nil)
    end

    it 'runs the service, enabled, restarted by a new unit or a new helper' do
      service = contain_service('puppet-clone-army-record').with(ensure: 'running', enable: true)
      is_expected.to service.that_subscribes_to(["File[#{unit_file}]", 'File[/usr/local/sbin/clone-army]'])
    end

    it 'starts the recorder after the helper is installed and before the clones are made' do
      is_expected.to contain_class('clone_army::record').that_requires('Class[clone_army::install]')
      is_expected.to contain_class('clone_army::record').that_comes_before('Class[clone_army::fleet]')
    end
  end

  context 'with every recorder setting' do
    let(:params) do
      base_params.merge(record: true, record_file: '/srv/load-runs/lab@1.jsonl', record_every: 5,
                        record_puppetdb: 'https://puppetdb.example.com:8081', helper_path: '/opt/clone army/clone-army',
                        record_access_log: '/var/log/puppetlabs/puppetserver/puppetserver-access.log')
    end

    it 'gives them all to the recorder, each a word of its own' do
      expect(exec_start).to eq('"/opt/clone army/clone-army" "record" "--output" "/srv/load-runs/lab@1.jsonl" ' \
                               '"--interval" "600" "--every" "5" "--server" "puppet.example.com" ' \
                               '"--puppetdb" "https://puppetdb.example.com:8081" ' \
                               '"--access-log" "/var/log/puppetlabs/puppetserver/puppetserver-access.log"')
      expect(unit).to include("ReadWritePaths=/srv/load-runs\n")
    end
  end

  context 'with record_group_by' do
    let(:params) { base_params.merge(record: true, record_group_by: 'pp_role') }

    it 'has the recorder group each sample\'s runs by it' do
      expect(exec_start).to end_with('"--server" "puppet.example.com" "--group-by" "pp_role"')
    end
  end

  context 'with record_group_by as a private extension\'s OID' do
    let(:params) { base_params.merge(record: true, record_group_by: '1.3.6.1.4.1.34380.1.2.1') }

    it 'passes it on as it is' do
      expect(exec_start).to end_with('"--group-by" "1.3.6.1.4.1.34380.1.2.1"')
    end
  end

  context 'without record_group_by (the default)' do
    let(:params) { base_params.merge(record: true) }

    it 'records no groups' do
      expect(exec_start).not_to include('--group-by')
    end
  end

  context 'with a server port' do
    let(:params) { base_params.merge(record: true, server_port: 8141) }

    it 'asks the server on that port' do
      expect(exec_start).to end_with('"--server" "puppet.example.com:8141"')
    end
  end

  context 'in apply mode (no server)' do
    let(:params) { { num_clones: 1, run_mode: 'apply', apply_source: '/srv/clone-army-apply', record: true } }

    it 'asks no server' do
      expect(exec_start).not_to include('--server')
    end
  end

  # The report task reads timelines and writes pages only in the directory
  # this file names (PuppetX::CloneArmy::RecordDir), with record on or off:
  # the timeline stays when the recorder goes.
  context 'naming the recorder\'s directory for the report task' do
    let(:record_dir_file) { PuppetX::CloneArmy::RecordDir::FILE }
    let(:named) do
      content = catalogue.resource('File', record_dir_file)[:content]
      PuppetX::CloneArmy::RecordDir.parse(record_dir_file, content)
    end

    [
      [{}, '/var/log/puppet-clone-army'],
      [{ record: true }, '/var/log/puppet-clone-army'],
      [{ record: true, record_file: '/srv/load-runs/lab@1.jsonl' }, '/srv/load-runs'],
      [{ record: false, record_file: '/var/tmp/x/y/run.jsonl' }, '/var/tmp/x/y'],
    ].each do |extra, dir|
      context "with #{extra.inspect}" do
        let(:params) { base_params.merge(extra) }

        it "names #{dir} in a file of root's that the task reads as it is" do
          is_expected.to contain_file(File.dirname(record_dir_file)).with(ensure: 'directory', owner: 'root', group: 'root', mode: '0755')
          is_expected.to contain_file(record_dir_file).with(ensure: 'file', owner: 'root', group: 'root', mode: '0644')
          expect(named).to eq(dir)
        end
      end
    end
  end

  [
    ['record_file', '/var/log/x y.jsonl'],
    ['record_file', '/timeline.jsonl'],
    ['record_file', '/var/log/../etc/timeline'],
    ['record_file', 'relative/timeline.jsonl'],
    ['record_every', 0],
    ['record_puppetdb', 'https://puppetdb.example.com/ x'],
    ['record_puppetdb', "puppetdb\nExecStartPre=/bin/sh"],
    ['record_access_log', "/var/log/access.log\nExecStartPre=/bin/sh"],
    ['record_access_log', 'access.log'],
    ['record_group_by', 'role'],
    ['record_group_by', 'pp_preshared_key'],
    ['record_group_by', 'pp_authorization'],
    ['record_group_by', "pp_role\nExecStartPre=/bin/sh"],
  ].each do |name, value|
    context "with #{name} => #{value.inspect}" do
      let(:params) { base_params.merge(record: true, name.to_sym => value) }

      it { is_expected.to compile.and_raise_error(%r{#{name}}) }
    end
  end
end
