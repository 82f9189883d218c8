# frozen_string_literal: true

require 'json'
require 'tmpdir'
require_relative '../../../bench/lib/clone_army_bench/watcher'

# The runs watcher writes a clone's line when it changes, so that a two-hour run
# keeps its runs, not every reading of them.
describe CloneArmyBench::RunsWatcher do
  let(:host) do
    Class.new do
      attr_accessor :clones

      def run(*_argv)
        Struct.new(:stdout).new(JSON.generate('ok' => true, 'result' => { 'clones' => clones }))
      end
    end.new
  end

  def clone1(report)
    { 'name' => 'clone1', 'last_run' => 1000, 'succeeded' => true, 'total_time' => 4, 'status' => 'unchanged',
      'run_report' => report, 'failure_kinds' => [] }
  end

  it 'writes a run once, and again only when it is judged anew' do
    Dir.mktmpdir do |dir|
      path = File.join(dir, 'runs')
      watcher = described_class.new(host, path, 900)
      File.write(path, '')
      [clone1('earlier-run'), clone1('earlier-run'), clone1('read'), clone1('read')].each do |c|
        host.clones = [c]
        watcher.send(:poll)
      end
      expect(File.read(path)).to eq("clone1 1000 true 4 unchanged earlier-run -\nclone1 1000 true 4 unchanged read -\n")
    end
  end
end
