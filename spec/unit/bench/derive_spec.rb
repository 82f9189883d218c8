# frozen_string_literal: true

require 'json'
require 'tmpdir'
require 'fileutils'
require_relative '../../../bench/lib/clone_army_bench/derive'

describe CloneArmyBench::Derive do
  results = File.expand_path('../../../bench/results', __dir__)

  it 're-derives a committed fleet result from its raw readings and quoted runs, figure for figure' do
    derive = described_class.new(File.join(results, '2026-11-26T102651Z'))
    expect(derive.derived_keys).to include('noop_apply_40', 'noop_class_share_40', 'cpu_ratio', 'pss_timer', 'pss_daemon', 'fleet_pss')
    expect(derive.differences).to eq([])
  end

  it 're-derives a committed growth result (idle memory, fleet memory, flatness)' do
    derive = described_class.new(File.join(results, '2026-11-28T025742Z.json'))
    expect(derive.derived_keys).to eq(['grow_flat', 'pss_timer', 'fleet_pss'])
    expect(derive.differences).to eq([])
  end

  it 'finds the committed medians an even count once took the lower run of' do
    derive = described_class.new(File.join(results, '2026-11-22T050429Z'))
    expect(derive.differences).to eq([['cpu_clone', 2.796, 3.199], ['cpu_host', 3.53, 3.634]])
  end

  it 'derives every committed result without an error, each within rounding or a known difference' do
    Dir.glob(File.join(results, '*.json')).each do |json|
      expect { described_class.new(json).derived }.not_to raise_error
    end
  end

  it 'judges a threshold figure again from its derived value' do
    Dir.mktmpdir do |dir|
      FileUtils.mkdir_p(File.join(dir, 'r.raw'))
      File.write(File.join(dir, 'r.raw', 'pss-timer-idle'), "clone1 10240 4 0\n")
      figure = { 'key' => 'pss_timer', 'label' => 'l', 'value' => 5.0, 'unit' => 'MiB', 'target' => '≤ 8', 'met' => true, 'note' => '' }
      File.write(File.join(dir, 'r.json'), JSON.generate('scale' => {}, 'figures' => [figure]))
      derived = described_class.new(File.join(dir, 'r')).derived['figures'].first
      expect(derived).to include('value' => 10.0, 'met' => false)
    end
  end

  it 'derives the phasing again once a run keeps its times' do
    Dir.mktmpdir do |dir|
      FileUtils.mkdir_p(File.join(dir, 'r.raw'))
      File.write(File.join(dir, 'r.raw', 'times'), "0 1000 1160\n")
      File.write(File.join(dir, 'r.raw', 'reports'), (0...10).map { |i| "clone#{i} #{1100 + i}.000\n" }.join)
      figure = { 'key' => 'phasing', 'label' => 'l', 'value' => 1.0, 'unit' => '', 'target' => 't', 'met' => false, 'note' => '' }
      File.write(File.join(dir, 'r.json'), JSON.generate('scale' => { 'runinterval' => 100 }, 'figures' => [figure]))
      expect(described_class.new(File.join(dir, 'r')).differences).to eq([])
    end
  end

  it 'fits the growth\'s slope over every batch, not its two ends' do
    Dir.mktmpdir do |dir|
      grows = [[0, 0.2], [100, 0.3], [200, 0.2]].map do |running, secs|
        { 'key' => "grow_#{running}", 'label' => 'l', 'value' => secs, 'unit' => 's', 'target' => '≤ 0.3', 'met' => true, 'note' => '' }
      end
      slope = { 'key' => 'grow_slope', 'label' => 'l', 'value' => nil, 'unit' => 's', 'target' => '–', 'met' => nil, 'note' => '' }
      File.write(File.join(dir, 'r.json'), JSON.generate('scale' => {}, 'figures' => grows + [slope]))
      derive = described_class.new(File.join(dir, 'r'))
      expect(derive.derived['figures'].last['value']).to eq(0.0)
      expect(derive.differences).to eq([['grow_slope', nil, 0.0]])
    end
  end

  describe '.same_within_rounding?' do
    it 'holds a derived value to the committed one at the committed precision' do
      expect(described_class.same_within_rounding?(3.634, 3.6345)).to be(true)
      expect(described_class.same_within_rounding?(7.3, 7.26)).to be(true)
      expect(described_class.same_within_rounding?(7.3, 7.2)).to be(false)
      expect(described_class.same_within_rounding?(nil, nil)).to be(true)
      expect(described_class.same_within_rounding?(nil, 1)).to be(false)
    end
  end
end
