# frozen_string_literal: true

require 'spec_helper'
require 'open3'

# Where class clone_army gets its helper: the module's files/clone-army (a
# release tarball carries it, a git checkout does not) or helper_source,
# verified by helper_checksum; which hosts the module's own helper runs on;
# and the install's own check that a new helper runs and speaks the
# providers' protocol before it replaces the installed one.
describe 'clone_army' do
  let(:node) { 'loadhost.example.com' }
  let(:helper) { '/usr/local/sbin/clone-army' }
  let(:sha256) { 'a' * 64 }
  let(:url) { 'http://127.0.0.1:8000/clone-army' }
  let(:os) { { 'name' => 'Debian', 'family' => 'Debian', 'release' => { 'major' => '12', 'full' => '12' } } }
  let(:arch) { { 'hardware' => 'x86_64', 'architecture' => 'amd64' } }
  let(:facts) do
    { kernel: 'Linux', os: os.merge(arch), memory: { 'system' => { 'total_bytes' => 24 * (1024**3) } },
      networking: { 'fqdn' => node } }
  end
  let(:params) { { server: 'puppet.example.com', num_clones: 1 } }

  context 'from a module that carries the helper' do
    it 'installs files/clone-army with the default checksum' do
      is_expected.to contain_file(helper).with(source: 'puppet:///modules/clone_army/clone-army', checksum: nil,
                                               checksum_value: nil, owner: 'root', group: 'root', mode: '0755')
    end

    ['x86_64', 'amd64'].each do |name|
      context "on a host whose only architecture fact says #{name}" do
        let(:arch) { name == 'x86_64' ? { 'hardware' => name } : { 'architecture' => name } }

        it { is_expected.to compile.with_all_deps }
      end
    end
  end

  context 'from a module without the helper (a git checkout)' do
    before(:each) { module_carries_helper(false) }

    # A pre_condition of its own, so that rspec-puppet's catalog cache never
    # answers with a catalog compiled against the other module.
    let(:pre_condition) { '# a module without files/clone-army' }

    it 'fails at once, saying to install the release tarball or to set helper_source and helper_checksum' do
      said = ['the module has no helper binary (files/clone-army is not in it: a git checkout',
              '`puppet module install clonearmy-clone_army-<version>.tar.gz`',
              "set helper_source and helper_checksum to the release's helper"]
      is_expected.to compile.and_raise_error(Regexp.new(said.map { |part| Regexp.escape(part) }.join('.*')))
    end

    context 'with helper_source and helper_checksum (http)' do
      let(:params) { super().merge(helper_source: url, helper_checksum: sha256) }

      it 'has Puppet fetch it and verify its sha256' do
        is_expected.to contain_file(helper).with(ensure: 'file', source: url, checksum: 'sha256', checksum_value: sha256,
                                                 owner: 'root', group: 'root', mode: '0755')
      end

      it 'installs it before the fleet, which runs it' do
        is_expected.to contain_clone_army_clone('clone1').that_requires("File[#{helper}]")
      end
    end

    context 'with helper_source an absolute path on the host' do
      let(:params) { super().merge(helper_source: '/srv/share/clone-army-0.4.0-x86_64-linux', helper_checksum: sha256) }

      it { is_expected.to contain_file(helper).with(source: '/srv/share/clone-army-0.4.0-x86_64-linux', checksum: 'sha256') }
    end
  end

  context 'with helper_source over https but no helper_checksum' do
    let(:params) { super().merge(helper_source: 'https://artifacts.example.com/clone-army') }

    it do
      is_expected.to compile.and_raise_error(
        %r{helper_source needs helper_checksum, the helper's sha256.*the checksum is what makes a fetched helper trustworthy},
      )
    end
  end

  context 'with helper_checksum but no helper_source' do
    let(:params) { super().merge(helper_checksum: sha256) }

    it { is_expected.to compile.and_raise_error(%r{helper_checksum is only used with helper_source}) }
  end

  {
    'a relative path' => 'files/clone-army',
    'an ftp URL' => 'ftp://example.com/clone-army',
    'a puppet: URL' => 'puppet:///modules/other/clone-army',
    'a URL with a space' => 'http://example.com/clone army',
    'an http URL without a host' => 'http:///clone-army',
  }.each do |what, source|
    context "with helper_source #{what}" do
      let(:params) { super().merge(helper_source: source, helper_checksum: sha256) }

      it { is_expected.to compile.and_raise_error(%r{parameter 'helper_source' expects}) }
    end
  end

  {
    'upper-case hex' => 'A' * 64,
    '63 digits' => 'a' * 63,
    'a sha256sum line' => "#{'a' * 64}  clone-army",
  }.each do |what, checksum|
    context "with helper_checksum of #{what}" do
      let(:params) { super().merge(helper_source: url, helper_checksum: checksum) }

      it { is_expected.to compile.and_raise_error(%r{parameter 'helper_checksum' expects}) }
    end
  end

  context 'on an aarch64 host' do
    let(:arch) { { 'hardware' => 'aarch64', 'architecture' => 'arm64' } }

    it 'refuses the module\'s helper by the architecture\'s name' do
      is_expected.to compile.and_raise_error(
        %r{architecture is 'aarch64' \(os.hardware\), and the module's helper \(files/clone-army\) runs only on .*'x86_64'\]},
      )
    end

    context 'with only the distribution\'s name for it' do
      let(:arch) { { 'architecture' => 'arm64' } }

      it { is_expected.to compile.and_raise_error(%r{CPU architecture is 'arm64' \(os.architecture\)}) }
    end

    context 'with helper_source (a helper built for it)' do
      let(:params) { super().merge(helper_source: url, helper_checksum: sha256) }

      it { is_expected.to contain_file(helper).with(source: url, checksum_value: sha256) }
    end
  end

  # The validate_cmd runs, as Puppet runs it (one string, through /bin/sh),
  # against a new helper before it replaces the installed one.
  describe 'the check of a new helper before it is installed' do
    around(:each) do |example|
      Dir.mktmpdir('clone-army-install-spec') do |dir|
        @dir = dir
        example.run
      end
    end

    let(:validate_cmd) { catalogue.resource('File', helper)[:validate_cmd] }

    # A program standing in for a new helper: `schema` prints `answer`.
    def candidate(answer)
      File.write(File.join(@dir, 'answer'), answer)
      path = File.join(@dir, 'clone-army20261125-1-abc')
      File.write(path, "#!/bin/sh\n[ \"$1\" = schema ] || exit 64\ncat '#{@dir}/answer'\n")
      File.chmod(0o755, path)
      path
    end

    def validate(path)
      Open3.capture2e(validate_cmd.gsub('%', path))
    end

    it 'is a command with the file in place of %' do
      expect(validate_cmd).to start_with("/bin/sh -c '").and end_with("' clone-army-check %")
      expect(validate_cmd.count('%')).to eq(1)
    end

    it 'passes a helper that answers in this module\'s protocol (as the helper prints it, compact or not)' do
      ours = PuppetX::CloneArmy::Helper::PROTOCOL_VERSION
      [%({"protocol":#{ours},"ok":true,"result":{}}\n), helper_fixture('generated/clone_list_stopped.json')].each do |answer|
        output, status = validate(candidate(answer))
        expect(status.exitstatus).to eq(0), output
      end
    end

    it 'refuses a newer helper, saying to upgrade the module' do
      ours = PuppetX::CloneArmy::Helper::PROTOCOL_VERSION
      output, status = validate(candidate(%({"protocol":#{ours + 1},"ok":true,"result":{}}\n)))
      expect(status.exitstatus).to eq(1)
      expect(output).to include("the new helper speaks protocol version #{ours + 1}, this module speaks version #{ours}; " \
                                'the helper is newer than the module: upgrade the clone_army module')
    end

    it 'refuses an older helper, saying to install the helper of the module\'s release' do
      ours = PuppetX::CloneArmy::Helper::PROTOCOL_VERSION
      output, status = validate(candidate(%({"protocol":#{ours - 1},"ok":true,"result":{}}\n)))
      expect(status.exitstatus).to eq(1)
      expect(output).to include("speaks protocol version #{ours - 1}, this module speaks version #{ours}; " \
                                'the helper is older than the module')
    end

    it 'refuses a file that does not run here (another architecture, a truncated download)' do
      path = File.join(@dir, 'clone-army20261125-2-def')
      File.binwrite(path, "\x7fELF\x02\x01\x01garbage")
      File.chmod(0o755, path)
      output, status = validate(path)
      expect(status.exitstatus).to eq(1)
      expect(output).to include('the new helper does not run on this host or is not a clone-army helper')
    end

    it 'speaks the protocol version the providers speak' do
      expect(validate_cmd).to include("case $p in #{PuppetX::CloneArmy::Helper::PROTOCOL_VERSION})")
    end
  end
end
